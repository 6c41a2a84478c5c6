"""Two model zoos, pre-trained at run time on the source tasks of :mod:`.images`.

Explained in chapters/transferability-benchmarks/02_experiments.md. Zoo A mirrors the standard benchmark: three
families (MLP, plain CNN, ResNet-lite) at four widths, all pre-trained on S1, so that size orders them. Zoo B follows
the paper's advice (BP2, BP4): models of similar size and different inductive biases, pre-trained on different
sources. Every model maps (n, 16, 16) images to features (``features``) and source logits (``forward``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from repro.common import check_choice, check_int, stopwatch
from repro.nn import fit_classifier

from .images import SOURCES, task_copy

__all__ = ["MLP", "CNN", "ResNetLite", "PooledCNN", "Mixer", "ZooModel", "build", "zoo_a_specs", "zoo_b_specs",
           "pretrain", "n_params", "FAMILIES", "N_CLASSES"]

N_CLASSES = {"S1": 32, "S2": 4, "S3": 16, "S4": 10}


class _Backbone(nn.Module):
    def __init__(self, feat_dim: int, n_out: int):
        super().__init__()
        self.feat_dim = feat_dim
        self.head = nn.Linear(feat_dim, n_out)

    def forward(self, x):
        return self.head(self.features(x))


class MLP(_Backbone):
    """A two-hidden-layer ReLU MLP on the flattened image; features are the second hidden layer (4 ``width``).

    Explained in chapters/transferability-benchmarks/02_experiments.md.
    """

    def __init__(self, width: int, n_out: int):
        super().__init__(4 * width, n_out)
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(256, 4 * width), nn.ReLU(), nn.Linear(4 * width, 4 * width),
                                  nn.ReLU())

    def features(self, x):
        return self.body(x)


class CNN(_Backbone):
    """Two conv-ReLU-maxpool stages (``width``, 2 ``width`` channels; kernel ``kernel``, dilation ``dilation``),
    then 2x2 average pooling: 8 ``width`` features that keep coarse position.

    Explained in chapters/transferability-benchmarks/02_experiments.md.
    """

    def __init__(self, width: int, n_out: int, kernel: int = 3, dilation: int = 1):
        super().__init__(8 * width, n_out)
        pad = dilation * (kernel - 1) // 2
        self.body = nn.Sequential(
            nn.Conv2d(1, width, kernel, padding=pad, dilation=dilation), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, kernel, padding=pad, dilation=dilation), nn.ReLU(), nn.MaxPool2d(2),
            nn.AdaptiveAvgPool2d(2), nn.Flatten())

    def features(self, x):
        return self.body(x[:, None])


class _Res(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a, self.b = nn.Conv2d(c, c, 3, padding=1), nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        return torch.relu(x + self.b(torch.relu(self.a(x))))


class ResNetLite(_Backbone):
    """The CNN with a residual block of two 3x3 convolutions added after its second stage (at 4x4); 8 ``width``
    features.

    Explained in chapters/transferability-benchmarks/02_experiments.md.
    """

    def __init__(self, width: int, n_out: int):
        super().__init__(8 * width, n_out)
        self.body = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), _Res(2 * width),
            nn.AdaptiveAvgPool2d(2), nn.Flatten())

    def features(self, x):
        return self.body(x[:, None])


class PooledCNN(_Backbone):
    """A CNN with global average pooling: translation-invariant features that forget position (4 ``width``).

    Explained in chapters/transferability-benchmarks/02_experiments.md.
    """

    def __init__(self, width: int, n_out: int):
        super().__init__(4 * width, n_out)
        self.body = nn.Sequential(
            nn.Conv2d(1, 2 * width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(2 * width, 4 * width, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())

    def features(self, x):
        return self.body(x[:, None])


class Mixer(_Backbone):
    """An MLP-Mixer-lite: 4x4 patches embedded in ``width`` dimensions, one token-mixing and one channel-mixing
    MLP with residuals, then the tokens averaged (``width`` features).

    Explained in chapters/transferability-benchmarks/02_experiments.md.
    """

    def __init__(self, width: int, n_out: int):
        super().__init__(width, n_out)
        self.embed = nn.Linear(16, width)
        self.tok = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16))
        self.chan = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))
        self.n1, self.n2 = nn.LayerNorm(width), nn.LayerNorm(width)

    def features(self, x):
        p = x.reshape(-1, 4, 4, 4, 4).permute(0, 1, 3, 2, 4).reshape(-1, 16, 16)   # (n, token, pixel)
        h = self.embed(p)
        h = h + self.tok(self.n1(h).transpose(1, 2)).transpose(1, 2)
        h = h + self.chan(self.n2(h))
        return h.mean(1)


FAMILIES = {"MLP": MLP, "CNN": CNN, "ResNet": ResNetLite, "Pooled": PooledCNN, "Mixer": Mixer,
            "WideCNN": lambda w, n: CNN(w, n, kernel=7), "DilatedCNN": lambda w, n: CNN(w, n, dilation=2)}


@dataclass
class ZooModel:
    """One pre-trained model of a zoo: its name, family, width, source task, module and training record.

    Explained in chapters/transferability-benchmarks/02_experiments.md.
    """
    name: str
    family: str
    width: int
    source: str
    net: nn.Module = field(repr=False)
    params: int = 0
    source_acc: float = float("nan")
    seconds: float = 0.0


def n_params(net: nn.Module) -> int:
    """The number of parameters of ``net``, its source head included.

    Explained in chapters/transferability-benchmarks/02_experiments.md.
    """
    return sum(p.numel() for p in net.parameters())


def build(family: str, width: int, source: str) -> nn.Module:
    """A fresh network of ``family`` at ``width`` with a head for ``source``'s classes.

    Explained in chapters/transferability-benchmarks/02_experiments.md.
    """
    check_choice("family", family, tuple(FAMILIES))
    check_choice("source", source, tuple(SOURCES))
    return FAMILIES[family](check_int("width", width), N_CLASSES[source])


def zoo_a_specs() -> list[tuple[str, int, str]]:
    """Zoo A: (family, width, source) of 3 families x 4 widths, all on S1, in the size order of the static ranker
    (widest first; at equal width ResNet-lite, then CNN, then MLP, as the paper's list alternates families).

    Explained in chapters/transferability-benchmarks/02_experiments.md.
    """
    return [(f, w, "S1") for w in (16, 8, 4, 2) for f in ("ResNet", "CNN", "MLP")]


def zoo_b_specs() -> list[tuple[str, int, str]]:
    """Zoo B: (family, width, source) of eight models of similar size (about 10k parameters) with different
    inductive biases, pre-trained on different sources.

    Explained in chapters/transferability-benchmarks/02_experiments.md.
    """
    return [("CNN", 12, "S2"), ("CNN", 12, "S3"), ("CNN", 12, "S4"), ("WideCNN", 5, "S3"), ("MLP", 9, "S4"),
            ("Mixer", 40, "S2"), ("Pooled", 8, "S1"), ("DilatedCNN", 12, "S1")]


def pretrain(specs, n_source: int, steps: int, seed: int, batch: int = 64, lr: float = 3e-3) -> list[ZooModel]:
    """Pre-train one model per (family, width, source) in ``specs`` with Adam for ``steps`` minibatches of
    ``batch`` images from ``n_source`` source images; source accuracy on fresh images is kept.

    Explained in chapters/transferability-benchmarks/02_experiments.md. Models of one zoo share the images of
    their source task, and model k is initialised from ``seed`` and k.
    """
    n_source, steps, seed = check_int("n_source", n_source), check_int("steps", steps), check_int("seed", seed, 0)
    data = {}
    out = []
    for k, (family, width, source) in enumerate(specs):
        if source not in data:
            X, y = task_copy(source, n_source + 1000, seed)
            data[source] = (torch.from_numpy(X), torch.from_numpy(y))
        X, y = data[source]
        Xtr, ytr, Xte, yte = X[:n_source], y[:n_source], X[n_source:], y[n_source:]
        torch.manual_seed(seed * 1000 + k)
        net = build(family, width, source)
        with stopwatch() as watch:
            fit_classifier(net, Xtr, ytr, steps=steps, batch_size=batch, lr=lr, seed=seed * 1000 + k)
            with torch.no_grad():
                acc = (net(Xte).argmax(1) == yte).float().mean().item()
            name = f"{family}-{width}" + (f"@{source}" if len({s for _, _, s in specs}) > 1 else "")
            size = n_params(net)
        out.append(ZooModel(name, family, width, source, net, size, acc, watch.seconds))
    return out
