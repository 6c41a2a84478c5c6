"""Divergent representations from causal interventions: the chapter's circuit, toy task and DAS training.

Explained in chapters/causal-divergence/ (01_theory.md: the hidden-pathway circuit, the null space and the geometry
of coordinate patching; 02_experiments.md: the toy causal task, DAS with the counterfactual-latent loss). A small
reproduction of Grant, Han, Tartaglini & Potts (ICLR 2026, arXiv 2511.04638); the CL loss is from Grant (2025),
"Model Alignment Search". The general intervention code lives in the package's other modules (:mod:`.patching`,
:mod:`.das`, :mod:`.metrics`, :mod:`.divergence`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from scipy.linalg import null_space
from torch import nn

from repro.common import check_choice, check_int, check_non_negative, check_same_shape, stopwatch
from repro.nn.classifier import fit_classifier
from .das import DAS
from .divergence import ot_divergence
from .metrics import iia

# ----------------------------------------------------------------------------------- the hidden-pathway circuit

CIRCUIT_W = np.array([[0.75, 0.25, 0.0, 0.5],
                      [0.0, 1.0, 0.0, 0.0],
                      [1.0, 1.0, -1.0, -1.0]])
CIRCUIT_B = np.array([-0.5, -0.5, 0.0])
NATURAL_A = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 1.0, 0.0]])
NATURAL_B = np.array([[0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 1.0, 1.0]])


def circuit(h):
    """The 4-input hidden-pathway circuit: pre-activations W h + b, score s = sum ReLU(.), class "A" iff s > 0.

    `h`: one input (4,) or a batch (n, 4). Returns (pre-activations, s, labels). Explained in
    chapters/causal-divergence/01_theory.md.
    """
    h = np.asarray(h, dtype=float)
    if h.shape[-1] != 4:
        raise ValueError(f"h must have 4 coordinates (the circuit's input width); got shape {h.shape}")
    pre = h @ CIRCUIT_W.T + CIRCUIT_B
    s = np.maximum(pre, 0).sum(-1)
    return pre, s, np.where(s > 0, "A", "B")


def circuit_null_direction():
    """The unit vector spanning the null space of CIRCUIT_W (one-dimensional).

    Explained in chapters/causal-divergence/01_theory.md.
    """
    n = null_space(CIRCUIT_W)[:, 0]
    return n / np.linalg.norm(n) * np.sign(n[0])


# ------------------------------------------------------------------------------- distributions for patching

DISTRIBUTIONS = ("axis_box", "rotated_box", "correlated_gaussian")


def sample_distribution(kind: str, n: int, dim: int = 2, seed: int = 0, angle: float = np.pi / 4, rho: float = 0.9):
    """n samples from an axis-aligned uniform box, the same box rotated, or a correlated Gaussian.

    The box is [-1, 1] x [-0.2, 0.2] x ... (a thin box, so its rotation is far from axis-aligned); the rotation turns
    every pair of coordinates (0, 1), (2, 3), ... by `angle`; the Gaussian has correlation `rho` between the same
    pairs. Explained in chapters/causal-divergence/01_theory.md.
    """
    check_choice("kind", kind, DISTRIBUTIONS)
    if dim < 2 or dim % 2:
        raise ValueError(f"dim must be an even number >= 2; got {dim}")
    rng = np.random.default_rng(seed)
    if kind == "correlated_gaussian":
        pair = np.linalg.cholesky(np.array([[1.0, rho], [rho, 1.0]]))
        z = rng.standard_normal((n, dim // 2, 2)) @ pair.T
        return z.reshape(n, dim)
    half = np.tile([1.0, 0.2], dim // 2)
    x = rng.uniform(-1, 1, (n, dim)) * half
    if kind == "rotated_box":
        c, s = np.cos(angle), np.sin(angle)
        x = (x.reshape(n, dim // 2, 2) @ np.array([[c, -s], [s, c]]).T).reshape(n, dim)
    return x


def random_coordinate_patches(H, seed: int = 0):
    """Patch a random half of the coordinates of each row of H with those of another random row.

    Returns (patched states, masks). Explained in chapters/causal-divergence/01_theory.md.
    """
    H = np.asarray(H, dtype=float)
    if H.ndim != 2:
        raise ValueError(f"H must be a 2-d array (n, d); got shape {H.shape}")
    rng = np.random.default_rng(seed)
    n, d = H.shape
    src = H[rng.permutation(n)]
    masks = np.zeros((n, d))
    for i in range(n):
        masks[i, rng.choice(d, d // 2, replace=False)] = 1
    return (1 - masks) * H + masks * src, masks


# ------------------------------------------------------------------------------------------ the toy causal task

XS, YS = (-1, 1), (0, 1, 2, 3, 4)
CLASSES = [(x, y) for x in XS for y in YS]            # class index c = CLASSES.index((x, y))
SPLITS = {
    # task 1 trains DAS; task 2 (the held-out classes) is the out-of-distribution test
    "og_holdouts": ({(x, y) for x in XS for y in (0, 2, 3, 4)}, {(x, y) for x in XS for y in (0, 1, 3, 4)}),
    "inner_square": ({(x, y) for x in XS for y in (0, 3)}, {(x, y) for x in XS for y in (1, 2)}),
    "xor": ({(-1, 0), (1, 1), (-1, 2), (1, 3), (-1, 1), (1, 0)},
            {(-1, 3), (1, 4), (-1, 4), (1, 2), (-1, 2), (1, 3)}),
}
HEADROOM_SPLITS = {
    # task 1 pairs differ in y by at most 1, task 2 pairs by 0 or 4: a read direction that leaks y, harmless on
    # task 1, writes an error four times as large on task 2 (explained in 02_experiments.md, "A task with headroom")
    "far_y": ({(x, y) for x in XS for y in (1, 2)}, {(x, y) for x in XS for y in (0, 4)}),
}
ALL_SPLITS = {**SPLITS, **HEADROOM_SPLITS}


@dataclass
class ToyTask:
    """Natural states h (n, 2 + extra) of the causal variables (x, y), with class labels and class means.

    Explained in chapters/causal-divergence/02_experiments.md.
    """

    h: torch.Tensor
    xy: np.ndarray
    cls: np.ndarray
    class_means: torch.Tensor
    n_causal: int = 2


def make_toy_task(n_per_class: int = 100, n_extra: int = 16, noise: float = 0.1, seed: int = 0) -> ToyTask:
    """The synthetic task: h = [x + 0.2 y, y] + N(0, noise^2), centred, then `n_extra` independent N(0, 1) dims.

    x in {-1, 1}, y in {0..4}: ten classes. Explained in chapters/causal-divergence/02_experiments.md.
    """
    check_int("n_per_class", n_per_class, 2)
    check_int("n_extra", n_extra, 0)
    check_non_negative("noise", noise)
    rng = np.random.default_rng(seed)
    xy = np.array([c for c in CLASSES for _ in range(n_per_class)], dtype=float)
    core = np.stack([xy[:, 0] + 0.2 * xy[:, 1], xy[:, 1]], 1) + noise * rng.standard_normal((len(xy), 2))
    core -= core.mean(0)
    h = np.concatenate([core, rng.standard_normal((len(xy), n_extra))], 1)
    cls = np.repeat(np.arange(len(CLASSES)), n_per_class)
    means = np.stack([h[cls == c].mean(0) for c in range(len(CLASSES))])
    return ToyTask(torch.tensor(h, dtype=torch.float32), xy, cls, torch.tensor(means, dtype=torch.float32))


def make_classifier(dim: int, hidden: int = 64, seed: int = 0) -> nn.Module:
    """The downstream network psi: an MLP from the state to the ten (x, y) classes.

    Explained in chapters/causal-divergence/02_experiments.md.
    """
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, len(CLASSES)))


def train_classifier(task: ToyTask, hidden: int = 64, steps: int = 300, lr: float = 1e-2, seed: int = 0) -> nn.Module:
    """Train psi on all natural states (full batch, Adam), then freeze it.

    Explained in chapters/causal-divergence/02_experiments.md.
    """
    model = make_classifier(task.h.shape[1], hidden, seed)
    fit_classifier(model, task.h, torch.as_tensor(task.cls), steps=steps, batch_size=None, lr=lr)
    for p in model.parameters():
        p.requires_grad_(False)
    return model.eval()


def interchange_pairs(task: ToyTask, classes: set, n_pairs: int, seed: int = 0):
    """Random (target, source) index pairs whose target, source and counterfactual classes all lie in `classes`.

    The intervention swaps x: the counterfactual class is (x_src, y_trg). Returns (trg, src, counterfactual class).
    Explained in chapters/causal-divergence/02_experiments.md.
    """
    bad = [c for c in classes if c not in CLASSES]
    if bad:
        raise ValueError(f"classes contains pairs that are not (x, y) classes of the task: {bad}")
    rng = np.random.default_rng(seed)
    keys = [tuple(map(int, r)) for r in task.xy]
    allowed = np.array([k in classes for k in keys])
    trg, src, cf = [], [], []
    idx = np.flatnonzero(allowed)
    while len(trg) < n_pairs:
        t, s = rng.choice(idx, 2 * n_pairs), rng.choice(idx, 2 * n_pairs)
        for a, b in zip(t, s):
            c = (keys[b][0], keys[a][1])
            if c in classes and len(trg) < n_pairs:
                trg.append(a), src.append(b), cf.append(CLASSES.index(c))
    return np.array(trg), np.array(src), np.array(cf)


# ------------------------------------------------------------------------------- the counterfactual-latent loss

def cl_loss(h_hat, h_bar):
    """Grant (2025)'s counterfactual-latent loss: mean squared error plus (1 - cosine) to the target states h_bar.

    Explained in chapters/causal-divergence/01_theory.md.
    """
    check_same_shape("h_hat", h_hat, "h_bar", h_bar)
    mse = ((h_hat - h_bar) ** 2).mean(-1)
    cos = nn.functional.cosine_similarity(h_hat, h_bar, dim=-1)
    return (mse + 1 - cos).mean()


def cl_loss_subspace(das: DAS, h_hat, h_bar):
    """The paper's restriction: the CL loss on the causal-subspace coordinates M R h, with the target detached.

    Explained in chapters/causal-divergence/01_theory.md.
    """
    return cl_loss(das.causal_coordinates(h_hat), das.causal_coordinates(h_bar).detach())


# -------------------------------------------------------------------------------------------- training DAS

LOSSES = ("action", "cl", "both")
CL_SPACES = ("subspace", "full")


@dataclass
class DASRun:
    """One trained alignment and its scores (IIA in and out of distribution, causal-dimension divergence).

    Explained in chapters/causal-divergence/02_experiments.md.
    """

    das: DAS
    iia: float
    ood_iia: float
    divergence: float
    baseline: float
    seconds: float
    history: list = field(default_factory=list)


def intervene(das: DAS, task: ToyTask, trg, src):
    """The intervened states for index pairs (trg, src) of the task's natural states.

    Explained in chapters/causal-divergence/02_experiments.md.
    """
    return das(task.h[trg], task.h[src])


def causal_divergence(task: ToyTask, h_hat, cf, n: int = 1000, seed: int = 0):
    """W2 on the causal dimensions between intervened states and natural states of their counterfactual classes.

    For each of `n` intervened states we draw one natural state of its counterfactual class (the reference) and one
    more (the baseline), so both clouds have the same class mix. Returns (divergence, natural baseline).
    Explained in chapters/causal-divergence/02_experiments.md.
    """
    if len(h_hat) != len(cf):
        raise ValueError(f"h_hat and cf must have the same length; got {len(h_hat)} and {len(cf)}")
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(cf), min(n, len(cf)), replace=False)
    by_class = {c: np.flatnonzero(task.cls == c) for c in np.unique(cf)}
    ref = np.array([rng.choice(by_class[c]) for c in cf[pick]])
    base = np.array([rng.choice(by_class[c]) for c in cf[pick]])
    k = task.n_causal
    return (ot_divergence(h_hat[pick, :k], task.h[ref, :k]), ot_divergence(task.h[base, :k], task.h[ref, :k]))


def train_das(task: ToyTask, clf: nn.Module, split: str = "og_holdouts", loss: str = "action", cl_weight: float = 1.0,
              kind: str = "linear", cl_space: str = "full", steps: int = 300, lr: float = 1e-2, n_pairs: int = 1000,
              seed: int = 0) -> DASRun:
    """Train a 1-d DAS for x on task 1 of `split` (a key of ALL_SPLITS); score IIA on fresh task-1 pairs, OOD IIA
    on task 2, and the divergence.

    `loss`: "action" (cross-entropy to the counterfactual class), "cl" (CL alone) or "both" (action + cl_weight * CL);
    `cl_space`: "full" (Grant 2025: the whole state) or "subspace" (the paper's restriction). The divergence is the
    exact W2 distance on the two causal dimensions between intervened states on task-1 pairs and natural states,
    with its natural baseline. Explained in chapters/causal-divergence/02_experiments.md.
    """
    check_choice("split", split, ALL_SPLITS)
    check_choice("loss", loss, LOSSES)
    check_choice("cl_space", cl_space, CL_SPACES)
    with stopwatch() as watch:
        task1, task2 = ALL_SPLITS[split]
        trg, src, cf = interchange_pairs(task, task1, n_pairs, seed)
        das = DAS(task.h.shape[1], 1, kind, seed=seed)
        opt = torch.optim.Adam(das.parameters(), lr=lr)
        y_cf, h_bar = torch.as_tensor(cf), task.class_means[cf]
        history = []
        for _ in range(steps):
            opt.zero_grad()
            h_hat = intervene(das, task, trg, src)
            total = torch.zeros(())
            if loss in ("action", "both"):
                total = total + nn.functional.cross_entropy(clf(h_hat), y_cf)
            if loss in ("cl", "both"):
                cl = cl_loss_subspace(das, h_hat, h_bar) if cl_space == "subspace" else cl_loss(h_hat, h_bar)
                total = total + (cl_weight if loss == "both" else 1.0) * cl
            total.backward()
            opt.step()
            history.append(float(total.detach()))
        with torch.no_grad():
            t_in, s_in, c_in = interchange_pairs(task, task1, n_pairs, seed + 10_000)
            t_out, s_out, c_out = interchange_pairs(task, task2, n_pairs, seed + 20_000)
            h_in = intervene(das, task, t_in, s_in)
            score_in, score_out = iia(clf(h_in), c_in), iia(clf(intervene(das, task, t_out, s_out)), c_out)
            div, base = causal_divergence(task, h_in, c_in, seed=seed)
    return DASRun(das, score_in, score_out, div, base, watch.seconds, history)


# ------------------------------------------------------------------------------------------ the pyvene peer

def train_pyvene_das(task: ToyTask, clf: nn.Module, split: str = "og_holdouts", steps: int = 300, lr: float = 1e-2,
                     n_pairs: int = 1000, seed: int = 0) -> DASRun:
    """The same 1-d interchange of x, trained with the action loss through pyvene's RotatedSpaceIntervention.

    pyvene is imported here, not at module load (it is heavy and optional). Scored exactly as `train_das`.
    Explained in chapters/causal-divergence/02_experiments.md.
    """
    import contextlib
    import io
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        import pyvene as pv
    check_choice("split", split, ALL_SPLITS)
    with stopwatch() as watch:
        task1, task2 = ALL_SPLITS[split]
        trg, src, cf = interchange_pairs(task, task1, n_pairs, seed)
        torch.manual_seed(seed)
        iv = pv.RotatedSpaceIntervention(embed_dim=task.h.shape[1])
        iv.set_interchange_dim(1)
        opt = torch.optim.Adam(iv.parameters(), lr=lr)
        y_cf = torch.as_tensor(cf)
        for _ in range(steps):
            opt.zero_grad()
            nn.functional.cross_entropy(clf(iv(task.h[trg], task.h[src])), y_cf).backward()
            opt.step()
        with torch.no_grad():
            t_in, s_in, c_in = interchange_pairs(task, task1, n_pairs, seed + 10_000)
            t_out, s_out, c_out = interchange_pairs(task, task2, n_pairs, seed + 20_000)
            h_in = iv(task.h[t_in], task.h[s_in])
            score_in, score_out = iia(clf(h_in), c_in), iia(clf(iv(task.h[t_out], task.h[s_out])), c_out)
            div, base = causal_divergence(task, h_in, c_in, seed=seed)
    return DASRun(iv, score_in, score_out, div, base, watch.seconds, [])
