"""Small multi-task models, many trained at once: per-modality encoders, masked mean fusion, a shared trunk,
per-dataset heads (or one flat head over the global label space) and the BAM-style residual descriptor adapter.

Explained in chapters/behavior-atlas/01_unification.md (the architecture) and chapters/behavior-atlas/02_experiments.md
(the runs). Every weight carries a leading model axis M, so that a multi-task model, eight single-task models of the
same size and their replicates train in one loop of batched matrix products (`torch.einsum`), each model drawing
minibatches from its own pool of training clips.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from repro.common import check_between, check_choice, check_int, check_positive

from .generator import DESCRIPTOR, FEATURES, MODALITIES, N_GLOBAL, SPEC, TRAIN_SETS, global_labels, n_classes

#: Head blocks: one block of columns per dataset (the held-out sarcasm set included), then the flat head's N_GLOBAL
#: columns shared by every dataset. A clip's logits are the columns of its block (or of the flat head), masked.
SLOTS = TRAIN_SETS + ("sar-e",)
OFFSETS = dict(zip(SLOTS, np.cumsum([0] + [n_classes(s) for s in SLOTS])[:-1].tolist()))
FLAT = sum(n_classes(s) for s in SLOTS)
K = FLAT + N_GLOBAL
ENCODER_WEIGHTS = ("We", "be", "W1", "b1", "W2", "b2")
ADAPTER_WEIGHTS = ("A1", "a1", "A2", "a2", "alpha")


@dataclass
class Pool:
    """The training (or test) clips of one model as tensors: x (N, 3, FEATURES), mask (N, 3), desc (N, DESCRIPTOR),
    dmask (N,), y (N,) target column, valid (N, K) the columns of its head, weight (N,) sampling weight
    (chapters/behavior-atlas/02_experiments.md)."""

    x: torch.Tensor
    mask: torch.Tensor
    desc: torch.Tensor
    dmask: torch.Tensor
    y: torch.Tensor
    valid: torch.Tensor
    weight: torch.Tensor

    def __len__(self) -> int:
        return len(self.y)


def make_pool(atlas, names, split: str = "train", head: str = "per-dataset", temperature: float = 1.0,
              limit: int | None = None) -> Pool:
    """The clips of datasets `names` from `atlas` as one Pool; `head` is "per-dataset" (local labels, one block of columns
    per dataset) or "flat" (global labels, the shared flat block); `temperature` tau samples dataset j with probability
    proportional to n_j**tau; `limit` keeps the first clips of each dataset (chapters/behavior-atlas/02_experiments.md)."""
    check_choice("head", head, ("per-dataset", "flat"))
    check_choice("split", split, ("train", "test"))
    check_between("temperature", temperature, 0.0, 1.0, closed="both")
    if isinstance(names, str) or not names or any(n not in SPEC for n in names):
        raise ValueError(f"names must be a list of dataset names from {list(SPEC)}, got {names!r}")
    parts = []
    for name in names:
        s = atlas[name][split]
        n = len(s) if limit is None else min(check_int("limit", limit), len(s))
        valid = np.zeros((n, K), bool)
        if head == "flat":
            valid[:, FLAT + global_labels(name, np.arange(n_classes(name)))] = True
            y = FLAT + global_labels(name, s.y[:n])
        else:
            valid[:, OFFSETS[name]:OFFSETS[name] + n_classes(name)] = True
            y = OFFSETS[name] + s.y[:n]
        w = np.full(n, float(n) ** temperature / n)
        parts.append((s.x[:n], s.mask[:n], s.desc[:n], s.desc_mask[:n], y, valid, w))
    cat = [np.concatenate(p) for p in zip(*parts)]
    f32 = lambda a: torch.as_tensor(a, dtype=torch.float32)
    return Pool(x=f32(cat[0]), mask=f32(cat[1]), desc=f32(cat[2]), dmask=f32(cat[3]),
                y=torch.as_tensor(cat[4], dtype=torch.long), valid=torch.as_tensor(cat[5]),
                weight=f32(cat[6] / cat[6].sum()))


def init_params(n_models: int, hidden: int = 32, adapter_hidden: int = 16, seed: int = 0) -> dict:
    """Weights of `n_models` networks, He-initialised, each with three modality encoders, a two-layer trunk, one head
    block (see `K`) and a descriptor adapter whose alpha starts at 0 (chapters/behavior-atlas/01_unification.md)."""
    M, H, A = check_int("n_models", n_models), check_int("hidden", hidden), check_int("adapter_hidden", adapter_hidden)
    g = torch.Generator().manual_seed(check_int("seed", seed, low=0))
    he = lambda *shape, fan: torch.randn(*shape, generator=g) * math.sqrt(2.0 / fan)
    return {"We": he(M, len(MODALITIES), FEATURES, H, fan=FEATURES), "be": torch.zeros(M, len(MODALITIES), H),
            "W1": he(M, H, H, fan=H), "b1": torch.zeros(M, H), "W2": he(M, H, H, fan=H), "b2": torch.zeros(M, H),
            "Wh": he(M, H, K, fan=H) * 0.5, "bh": torch.zeros(M, K),
            "A1": he(M, DESCRIPTOR, A, fan=DESCRIPTOR), "a1": torch.zeros(M, A), "A2": he(M, A, H, fan=A) * 0.5,
            "a2": torch.zeros(M, H), "alpha": torch.zeros(M)}


def n_parameters(params: dict, names=ENCODER_WEIGHTS + ("Wh", "bh")) -> int:
    """Weights of one of the stacked models, counting the arrays `names` (chapters/behavior-atlas/02_experiments.md)."""
    if not isinstance(params, dict) or any(n not in params for n in names):
        raise ValueError("params must be a dict from init_params holding every name in `names`")
    return int(sum(params[n][0].numel() for n in names))


def encode(params: dict, x, mask):
    """Per-modality encodings e (M, B, 3, H) and the trunk's output t (M, B, H) for inputs x (M, B, 3, FEATURES)
    with modality mask (M, B, 3): encoders, masked mean fusion, trunk (chapters/behavior-atlas/01_unification.md)."""
    if x.dim() != 4 or mask.shape != x.shape[:3]:
        raise ValueError(f"x must be (M, B, 3, FEATURES) and mask (M, B, 3), got {tuple(x.shape)}, {tuple(mask.shape)}")
    e = F.relu(torch.einsum("mbkf,mkfh->mbkh", x, params["We"]) + params["be"][:, None]) * mask[..., None]
    fused = e.sum(2) / mask.sum(2, keepdim=True).clamp(min=1.0)
    h = F.relu(torch.einsum("mbh,mhg->mbg", fused, params["W1"]) + params["b1"][:, None])
    t = F.relu(torch.einsum("mbh,mhg->mbg", h, params["W2"]) + params["b2"][:, None])
    return e, t


def adapt(params: dict, t, desc, dmask):
    """The residual descriptor adapter h + alpha * MLP(descriptor), applied where a descriptor exists
    (chapters/behavior-atlas/01_unification.md)."""
    u = F.relu(torch.einsum("mbq,mqa->mba", desc, params["A1"]) + params["a1"][:, None])
    r = torch.einsum("mba,mah->mbh", u, params["A2"]) + params["a2"][:, None]
    return t + params["alpha"][:, None, None] * dmask[..., None] * r


def logits(params: dict, x, mask, desc=None, dmask=None):
    """Head logits (M, B, K) of every model for its batch; with `desc`, through the adapter
    (chapters/behavior-atlas/01_unification.md)."""
    _, t = encode(params, x, mask)
    if desc is not None:
        t = adapt(params, t, desc, dmask)
    return torch.einsum("mbh,mhk->mbk", t, params["Wh"]) + params["bh"][:, None]


def train(params: dict, pools: list, steps: int, *, trainable=None, lr: float = 3e-3, batch: int = 128,
          weight_decay: float = 1e-4, adapter: bool = False, desc_dropout: float = 0.3, seed: int = 0) -> list:
    """Train the stacked models in place, model m on `pools[m]`, for `steps` AdamW steps of `batch` clips drawn by
    each pool's weights; `trainable` names the arrays to update (all by default); with `adapter`, descriptors pass
    through the adapter and are dropped for a share `desc_dropout` of clips (BAM's modality dropout). Returns the
    mean loss of each step (chapters/behavior-atlas/02_experiments.md)."""
    steps, batch = check_int("steps", steps), check_int("batch", batch)
    check_positive("lr", lr)
    check_between("desc_dropout", desc_dropout, 0.0, 1.0, closed="left")
    M = params["We"].shape[0]
    if len(pools) != M:
        raise ValueError(f"pools must hold one Pool per model ({M}), got {len(pools)}")
    names = list(trainable or params)
    if any(n not in params for n in names):
        raise ValueError(f"trainable names unknown arrays: {[n for n in names if n not in params]}")
    for n in params:
        params[n].requires_grad_(n in names)
    opt = torch.optim.AdamW([params[n] for n in names], lr=lr, weight_decay=weight_decay)
    g = torch.Generator().manual_seed(check_int("seed", seed, low=0))
    losses = []
    unique = list({id(p): p for p in pools}.values())                 # replicates share one pool
    start = np.cumsum([0] + [len(p) for p in unique])
    where = {id(p): start[k] for k, p in enumerate(unique)}
    cat = {f: torch.cat([getattr(p, f) for p in unique]) for f in ("x", "mask", "y", "valid", "desc", "dmask")}
    draws = torch.stack([torch.multinomial(p.weight, steps * batch, replacement=True, generator=g).view(steps, batch)
                         + int(where[id(p)]) for p in pools], 1)          # (steps, M, batch)
    for step in range(steps):
        idx = draws[step]
        stack = lambda f: cat[f][idx]
        x, mask, y, valid = stack("x"), stack("mask"), stack("y"), stack("valid")
        desc = dmask = None
        if adapter:
            desc, dmask = stack("desc"), stack("dmask")
            dmask = dmask * (torch.rand(dmask.shape, generator=g) >= desc_dropout)
        z = logits(params, x, mask, desc, dmask).masked_fill(~valid, -1e9)
        loss = F.cross_entropy(z.reshape(-1, K), y.reshape(-1))
        opt.zero_grad()
        (loss * M).backward()
        opt.step()
        losses.append(loss.item())
    for n in params:
        params[n].requires_grad_(False)
    return losses


@torch.no_grad()
def predict(params: dict, pool: Pool, adapter: bool = False) -> np.ndarray:
    """Predicted target columns (M, N) of every stacked model on the same clips `pool`
    (chapters/behavior-atlas/02_experiments.md)."""
    M = params["We"].shape[0]
    ex = lambda t: t.unsqueeze(0).expand(M, *t.shape)
    desc, dmask = (ex(pool.desc), ex(pool.dmask)) if adapter else (None, None)
    z = logits(params, ex(pool.x), ex(pool.mask), desc, dmask).masked_fill(~ex(pool.valid), -1e9)
    return z.argmax(-1).numpy()


@torch.no_grad()
def features(params: dict, pool: Pool, model: int = 0) -> np.ndarray:
    """The frozen representation of model `model` for probes: its three modality encodings and its trunk output,
    concatenated, (N, 4H) (chapters/behavior-atlas/02_experiments.md)."""
    M = params["We"].shape[0]
    model = check_int("model", model, low=0)
    if model >= M:
        raise ValueError(f"model must be below the number of stacked models {M}, got {model}")
    one = {k: v[model:model + 1] for k, v in params.items()}
    e, t = encode(one, pool.x[None], pool.mask[None])
    return torch.cat([e[0].flatten(1), t[0]], 1).numpy()


def train_probes(feats: list, labels: list, n_classes_: int, steps: int, hidden: int = 32, lr: float = 3e-3,
                 weight_decay: float = 1e-3, seed: int = 0):
    """Train one small MLP head (features -> hidden -> classes) per (features, labels) pair, all at once, on frozen
    features; returns a function that predicts for a list of feature arrays (chapters/behavior-atlas/02_experiments.md)."""
    if len(feats) != len(labels) or not feats:
        raise ValueError("feats and labels must be non-empty lists of one length")
    steps, hidden = check_int("steps", steps), check_int("hidden", hidden)
    D = feats[0].shape[1]
    mu = [f.mean(0) for f in feats]
    sd = [f.std(0) + 1e-3 for f in feats]
    Xs = [torch.as_tensor((f - m) / s, dtype=torch.float32) for f, m, s in zip(feats, mu, sd)]
    Ys = [torch.as_tensor(y, dtype=torch.long) for y in labels]
    M = len(Xs)
    g = torch.Generator().manual_seed(check_int("seed", seed, low=0))
    P = {"W1": torch.randn(M, D, hidden, generator=g) * math.sqrt(2 / D), "b1": torch.zeros(M, hidden),
         "W2": torch.randn(M, hidden, n_classes_, generator=g) * math.sqrt(1 / hidden), "b2": torch.zeros(M, n_classes_)}
    for v in P.values():
        v.requires_grad_(True)
    opt = torch.optim.AdamW(P.values(), lr=lr, weight_decay=weight_decay)
    fwd = lambda X: torch.einsum("mbh,mhc->mbc", F.relu(torch.einsum("mbd,mdh->mbh", X, P["W1"]) + P["b1"][:, None]),
                                 P["W2"]) + P["b2"][:, None]
    batch = 64
    for _ in range(steps):
        idx = [torch.randint(0, len(y), (batch,), generator=g) for y in Ys]
        X = torch.stack([x[i] for x, i in zip(Xs, idx)])
        Y = torch.stack([y[i] for y, i in zip(Ys, idx)])
        loss = F.cross_entropy(fwd(X).reshape(-1, n_classes_), Y.reshape(-1))
        opt.zero_grad()
        (loss * M).backward()
        opt.step()

    @torch.no_grad()
    def predict_probes(test_feats: list) -> list:
        X = torch.stack([torch.as_tensor((f - m) / s, dtype=torch.float32) for f, m, s in zip(test_feats, mu, sd)])
        return list(fwd(X).argmax(-1).numpy())

    return predict_probes
