"""The chapter's tasks: a bundled scikit-learn data set, a small target classifier trained on it, and the grouping
of its features into tokens.

Explained in chapters/amortized-explainer/02_experiments.md. Breast cancer (30 features) and wine (13) are
standardised and explained by an MLP with two hidden layers of 64; digits (8×8 images) by a tiny CNN, with 2×2
patches as the 16 groups. The baseline ``b = 0`` is the training mean after standardising (the digits' pixels are
scaled to [0, 1], so there 0 is a black pixel).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..common.checks import check_choice, check_int
from ..nn import fit_classifier

__all__ = ["TASKS", "Task", "make_task", "mlp", "tiny_cnn", "train_classifier"]

TASKS = ("breast-cancer", "wine", "digits")


def mlp(d_in: int, n_classes: int, hidden: int = 64) -> nn.Module:
    """The tabular target: two hidden ReLU layers of ``hidden`` units, logits out.

    Explained in chapters/amortized-explainer/02_experiments.md.
    """
    return nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, n_classes))


def tiny_cnn(n_classes: int = 10) -> nn.Module:
    """The digits target: two 3×3 convolutions (8 and 16 channels), a 2×2 max-pool and a linear layer, logits out.

    Explained in chapters/amortized-explainer/02_experiments.md. Inputs ``(n, 1, 8, 8)``.
    """
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 16, n_classes))


def train_classifier(net: nn.Module, x: torch.Tensor, y: torch.Tensor, steps: int = 300, lr: float = 1e-2,
                     seed: int = 0, label_smoothing: float = 0.1) -> nn.Module:
    """Full-batch Adam on cross-entropy with weight decay 1e-4 and label smoothing; returns ``net`` in eval mode.

    Explained in chapters/amortized-explainer/02_experiments.md. Label smoothing keeps the predicted probability
    away from 1: a saturated softmax (exactly 1 in float32) makes every perturbation's drop Δ zero, and with it every
    perturbation-based prior and metric.
    """
    torch.manual_seed(check_int("seed", seed, 0))
    fit_classifier(net, x, y, steps=steps, batch_size=None, lr=lr, weight_decay=1e-4, label_smoothing=label_smoothing,
                   seed=seed)
    return net


@dataclass
class Task:
    """One task: splits, the trained target (``net`` gives logits, ``prob`` the softmax module the metrics and the
    priors explain), the grouping and the test accuracy. Explained in chapters/amortized-explainer/02_experiments.md."""

    name: str
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    net: nn.Module
    prob: nn.Module
    groups: torch.Tensor
    n_groups: int
    accuracy: float
    feature_names: list

    @property
    def token_dim(self) -> int:
        """Features per group."""
        return self.groups.numel() // self.n_groups


def _load(name):
    from sklearn import datasets

    if name == "breast-cancer":
        d = datasets.load_breast_cancer()
    elif name == "wine":
        d = datasets.load_wine()
    else:
        d = datasets.load_digits()
    return d.data.astype(np.float32), d.target.astype(np.int64), [str(f) for f in d.feature_names]


def make_task(name: str, n_train: int = 200, n_test: int = 60, seed: int = 0, steps: int = 300) -> Task:
    """Split the data set ``name`` (``n_test`` evaluation inputs; the rest train the target, and the first
    ``n_train`` of them, or all if fewer, train the explainer), standardise, train the target, build the grouping.

    Explained in chapters/amortized-explainer/02_experiments.md. The target trains on every input outside the test
    split; the explainer sees ``x_train`` only.
    """
    check_choice("name", name, TASKS)
    n_train, n_test = check_int("n_train", n_train, 2), check_int("n_test", n_test, 2)
    x, y, names = _load(name)
    if n_test > len(x) // 2:
        raise ValueError(f"n_test must be at most {len(x) // 2} for {name}; got {n_test}")
    rng = np.random.default_rng(check_int("seed", seed, 0))
    order = rng.permutation(len(x))
    test, rest = order[:n_test], order[n_test:]
    if name == "digits":
        x = x / 16.0
        xt = torch.tensor(x).reshape(-1, 1, 8, 8)
        r, c = torch.meshgrid(torch.arange(8), torch.arange(8), indexing="ij")
        groups, n_groups = ((r // 2) * 4 + c // 2)[None], 16
        net = tiny_cnn(10)
    else:
        mu, sd = x[rest].mean(0), x[rest].std(0) + 1e-8
        xt = torch.tensor((x - mu) / sd)
        groups, n_groups = torch.arange(x.shape[1]), x.shape[1]
        net = mlp(x.shape[1], int(y.max()) + 1)
    yt = torch.tensor(y)
    net = train_classifier(net, xt[rest], yt[rest], steps=steps, seed=seed)
    for p in net.parameters():
        p.requires_grad_(False)
    prob = nn.Sequential(net, nn.Softmax(dim=1)).eval()
    with torch.no_grad():
        acc = float((net(xt[test]).argmax(1) == yt[test]).float().mean())
    tr = rest[:n_train]
    return Task(name, xt[tr], yt[tr], xt[test], yt[test], net, prob, groups, n_groups, acc, names)
