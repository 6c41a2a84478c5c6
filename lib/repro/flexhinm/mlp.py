"""The digits MLP, trained and fine-tuned many models at once (one batched matrix product per layer).

Explained in chapters/flexhinm/02_experiments.md. A model is a list of weights (B, out, in) and biases (B, out):
``B`` models side by side, each with its own seed and its own train/test split of scikit-learn's 8x8 digits.
Masks (B, out, in) multiply the weights in every forward pass and are re-applied after every step, so a pruned
weight stays exactly zero. :func:`finetune_hard_concrete` is our reconstruction of gradual pruning with Hard
Concrete gates on the 2:4 region.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from ..common import check_int, check_positive, check_seeds
from .gates import expected_l0, hard_concrete_sample

__all__ = ["DigitsSplits", "digits_splits", "init_mlp", "forward", "train_mlp", "accuracy", "input_power",
           "finetune_hard_concrete", "SIZES"]

SIZES = (64, 128, 128, 10)


@dataclass
class DigitsSplits:
    """Train and test splits of digits, one per seed, stacked: X (S, n, 64) in [0, 1], y (S, n).

    Explained in chapters/flexhinm/02_experiments.md.
    """

    X_train: torch.Tensor
    y_train: torch.Tensor
    X_test: torch.Tensor
    y_test: torch.Tensor
    seeds: list


def digits_splits(seeds, test_size: float = 0.25) -> DigitsSplits:
    """A stratified train/test split of digits for each seed (features divided by 16).

    Explained in chapters/flexhinm/02_experiments.md.
    """
    seeds = check_seeds(seeds)
    X, y = load_digits(return_X_y=True)
    parts = [train_test_split(X / 16.0, y, test_size=test_size, stratify=y, random_state=s) for s in seeds]
    f = lambda i, dt: torch.as_tensor(np.stack([p[i] for p in parts]), dtype=dt)
    return DigitsSplits(f(0, torch.float32), f(2, torch.long), f(1, torch.float32), f(3, torch.long), seeds)


def init_mlp(seeds, sizes=SIZES) -> tuple[list, list]:
    """He-uniform weights and zero biases for one MLP per seed, stacked along a first axis.

    Explained in chapters/flexhinm/02_experiments.md.
    """
    seeds = check_seeds(seeds)
    Ws, bs = [], []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        layer = []
        for s in seeds:
            g = torch.Generator().manual_seed(1000 * s + i)
            layer.append((torch.rand(n_out, n_in, generator=g) * 2 - 1) * np.sqrt(6.0 / n_in))
        Ws.append(torch.stack(layer))
        bs.append(torch.zeros(len(seeds), n_out))
    return Ws, bs


def forward(Ws, bs, X, masks=None, return_hidden: bool = False):
    """Logits (B, n, classes) of B models on inputs X (B, n, in); ReLU between layers; masks multiply weights.

    Explained in chapters/flexhinm/02_experiments.md. ``masks`` is a list with one entry per layer (None: dense).
    """
    h, hidden = X, []
    for i, (W, b) in enumerate(zip(Ws, bs)):
        if masks is not None and masks[i] is not None:
            W = W * masks[i]
        h = torch.baddbmm(b[:, None, :], h, W.transpose(1, 2))
        if i < len(Ws) - 1:
            h = torch.relu(h)
            hidden.append(h)
    return (h, hidden) if return_hidden else h


class _RowPicker:
    """Mini-batch rows of B data sets at once: ``pick(idx)[b] == X[b, idx[b]]`` for X (B, n, d), idx (B, k).

    The same values as ``torch.gather(X, 1, idx[..., None].expand(-1, -1, d))`` (a pure copy, so bit for bit), by
    one ``index_select`` on the rows of X flattened once to (B n, d), which is several times faster on the CPU.
    """

    def __init__(self, X):
        B, n, d = X.shape
        self.flat = X.reshape(B * n, d)
        self.offsets = torch.arange(B)[:, None] * n
        self.d = d

    def __call__(self, idx):
        rows = self.flat.index_select(0, (idx + self.offsets).reshape(-1))
        return rows.reshape(idx.shape[0], idx.shape[1], self.d)


def _check_train(steps, lr, batch_size):
    return check_int("steps", steps, low=0), check_positive("lr", lr), check_int("batch_size", batch_size)


def train_mlp(Ws, bs, X, y, steps: int, lr: float = 3e-3, batch_size: int = 128, masks=None, seed: int = 0,
              share: int | None = None):
    """Adam on the cross-entropy of B models at once, each on its own data (X (B, n, in), y (B, n)).

    Explained in chapters/flexhinm/02_experiments.md. Returns trained copies; masked weights stay zero. With
    ``share=k``, models ``b`` and ``b + k`` draw the same mini-batches (common random numbers for paired methods).
    """
    steps, lr, batch_size = _check_train(steps, lr, batch_size)
    if X.shape[0] != Ws[0].shape[0]:
        raise ValueError(f"X must hold one data set per model: got {X.shape[0]} for {Ws[0].shape[0]} models")
    masks = masks if masks is not None else [None] * len(Ws)
    Ws = [(W * m if m is not None else W).clone().requires_grad_(True) for W, m in zip(Ws, masks)]
    bs = [b.clone().requires_grad_(True) for b in bs]
    opt = torch.optim.Adam(Ws + bs, lr=lr)
    g = torch.Generator().manual_seed(seed)
    B, n = y.shape
    k = B if share is None else check_int("share", share)
    if B % k:
        raise ValueError(f"share must divide the number of models ({B}), got {share}")
    pick = _RowPicker(X)
    for _ in range(steps):
        idx = torch.randint(n, (k, batch_size), generator=g).repeat(B // k, 1)
        xb = pick(idx)
        logits = forward(Ws, bs, xb, masks)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 torch.gather(y, 1, idx).reshape(-1)) * B
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            for W, m in zip(Ws, masks):
                if m is not None:
                    W.mul_(m)
    return [W.detach() for W in Ws], [b.detach() for b in bs]


@torch.no_grad()
def correct(Ws, bs, X, y, masks=None) -> np.ndarray:
    """Whether each of the B models classifies each image of its own test set correctly: booleans (B, n).

    Explained in chapters/flexhinm/02_experiments.md (the paired per-image intervals); its mean over n is
    :func:`accuracy`.
    """
    return (forward(Ws, bs, X, masks).argmax(-1) == y).numpy()


@torch.no_grad()
def accuracy(Ws, bs, X, y, masks=None) -> np.ndarray:
    """Test accuracy of each of the B models on its own test set.

    Explained in chapters/flexhinm/02_experiments.md.
    """
    return (forward(Ws, bs, X, masks).argmax(-1) == y).float().mean(1).numpy()


@torch.no_grad()
def input_power(Ws, bs, X) -> list:
    """The mean square of every layer's inputs over X, per model: E[x_j^2], (B, in) per layer.

    Explained in chapters/flexhinm/02_experiments.md. Saliency ``w_ij^2 E[x_j^2]`` is the diagonal version of the
    optimal-brain-surgeon saliency (the loss increase from removing one weight, Hessian ~ E[x x^T]).
    """
    _, hidden = forward(Ws, bs, X, return_hidden=True)
    return [(a ** 2).mean(1) for a in [X] + hidden[:len(Ws) - 1]]


def finetune_hard_concrete(Ws, bs, X, y, fixed, nm, steps: int, ramp_steps: int, project, init_log_alpha,
                           group_ids, lr: float = 1e-3, gate_lr: float = 0.05, penalty: float = 1.0,
                           batch_size: int = 128, seed: int = 0, share: int | None = None):
    """Gradual pruning with Hard Concrete gates on the 2:4 region (our reconstruction).

    Explained in chapters/flexhinm/02_experiments.md. For each pruned layer: ``fixed`` marks the dense region (kept),
    ``nm`` the 2:4 region (gated); every other weight fades out along a cubic schedule over ``ramp_steps``. The gates
    ``z ~ HardConcrete(log_alpha)`` multiply the 2:4 weights; a penalty pulls the expected L0 of every row of every
    group of four (``group_ids``, -1 outside the region) towards two. After ``ramp_steps`` the callable
    ``project(log_alphas)`` turns the gates into final masks (top two by ``log_alpha``), and the rest of the
    ``steps`` fine-tune with those masks. Returns weights, biases and the final masks.
    """
    steps, lr, batch_size = _check_train(steps, lr, batch_size)
    ramp_steps = check_int("ramp_steps", ramp_steps)
    if ramp_steps > steps:
        raise ValueError(f"ramp_steps must be at most steps, got {ramp_steps} > {steps}")
    L = len(fixed)
    Ws = [W.clone().requires_grad_(True) for W in Ws]
    bs = [b.clone().requires_grad_(True) for b in bs]
    log_alpha = [a.clone().requires_grad_(True) for a in init_log_alpha]
    opt = torch.optim.Adam([{"params": Ws + bs, "lr": lr}, {"params": log_alpha, "lr": gate_lr}])
    g = torch.Generator().manual_seed(seed)
    B, n = y.shape
    sizes = [int(ids.max()) + 1 for ids in group_ids]
    # the same every step, so made once: the float masks of the regions and the gates' group indices
    fixed_f = [f.float() for f in fixed]
    nm_f = [m.float() for m in nm]
    rest = [(~f & ~m).float() for f, m in zip(fixed, nm)]
    inside = [ids >= 0 for ids in group_ids]
    slots = [ids.clamp(min=0).reshape(B, -1) for ids in group_ids]
    pick = _RowPicker(X)
    for t in range(ramp_steps):
        fade = (1.0 - (t + 1) / ramp_steps) ** 3
        masks = []
        for l in range(L):
            z = hard_concrete_sample(log_alpha[l], generator=g)
            masks.append(fixed_f[l] + nm_f[l] * z + rest[l] * fade)
        masks += [None] * (len(Ws) - L)
        idx = torch.randint(n, (B if share is None else share, batch_size), generator=g)
        idx = idx.repeat(B // idx.shape[0], 1)
        xb = pick(idx)
        logits = forward(Ws, bs, xb, masks)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 torch.gather(y, 1, idx).reshape(-1)) * B
        for l in range(L):
            counts = torch.zeros(B, sizes[l]).scatter_add(
                1, slots[l], (expected_l0(log_alpha[l]) * inside[l]).reshape(B, -1))
            loss = loss + penalty * ((counts - 2.0) ** 2).mean(1).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    final = project([a.detach() for a in log_alpha]) + [None] * (len(Ws) - L)
    return (*train_mlp([W.detach() for W in Ws], [b.detach() for b in bs], X, y, steps - ramp_steps, lr,
                       batch_size, final, seed + 1, share), final[:L])
