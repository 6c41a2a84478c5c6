"""The optimal-transport divergence between intervened and natural states, with its natural baseline.

Explained in chapters/causal-divergence/01_theory.md. For two point clouds X (intervened) and Y (natural), each with
uniform weights, the divergence is the p-Wasserstein distance

    W_p(X, Y) = ( min_{P in U(1/n, 1/m)}  sum_ij P_ij ||x_i - y_j||^p )^(1/p),

computed exactly by POT's network simplex (`method="emd"`) or by entropic Sinkhorn (`method="sinkhorn"`). A finite
sample is never at distance 0 from another sample of the same distribution, so the number means nothing alone:
`divergence_with_baseline` always returns it beside the distance between two disjoint natural samples of the same
size ("natural vs natural").
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import ot
import torch

from ..common import check_2d, check_between, check_choice, check_same_width

METHODS = ("emd", "sinkhorn")


def _np(x):
    return x.detach().cpu().double().numpy() if isinstance(x, torch.Tensor) else np.asarray(x, dtype=float)


def ot_divergence(X, Y, method: str = "emd", p: int = 2, reg: float = 0.05) -> float:
    """W_p between the empirical distributions of the rows of X and of Y (see the module docstring).

    `reg` is Sinkhorn's entropic regularisation, relative to the mean cost. Explained in
    chapters/causal-divergence/01_theory.md.
    """
    X, Y = _np(X), _np(Y)
    check_2d("X", X)
    check_2d("Y", Y)
    check_same_width("X", X, "Y", Y)
    check_choice("method", method, METHODS)
    check_between("p", p, 1, float("inf"), closed="left")
    a, b = np.full(len(X), 1 / len(X)), np.full(len(Y), 1 / len(Y))
    C = ot.dist(X, Y, metric="euclidean") ** p
    if method == "emd":
        cost = ot.emd2(a, b, C, numItermax=1_000_000)
    else:
        scale = C.mean() if C.mean() > 0 else 1.0
        cost = ot.sinkhorn2(a, b, C / scale, reg, numItermax=5000) * scale
    return float(max(cost, 0.0)) ** (1 / p)


@dataclass
class DivergenceResult:
    """An intervened-vs-natural divergence beside the natural-vs-natural baseline of the same sample size.

    Explained in chapters/causal-divergence/01_theory.md.
    """

    divergence: float
    baseline: float
    n: int

    @property
    def ratio(self) -> float:
        return self.divergence / self.baseline if self.baseline > 0 else float("inf")


def divergence_with_baseline(intervened, natural, n: int | None = None, method: str = "emd", p: int = 2,
                             seed: int = 0) -> DivergenceResult:
    """Divergence of `intervened` from `natural`, and of a disjoint natural half from the same reference.

    The natural states are split at random into a reference half and a baseline half of `n` rows each (default:
    as many as the data allow, at most the number of intervened rows); `n` intervened rows are drawn too, so both
    numbers are distances between equally large samples. Explained in chapters/causal-divergence/01_theory.md.
    """
    I, N = _np(intervened), _np(natural)
    check_2d("intervened", I)
    check_2d("natural", N)
    check_same_width("intervened", I, "natural", N)
    n_max = min(len(I), len(N) // 2)
    n = n_max if n is None else int(n)
    if not 1 <= n <= n_max:
        raise ValueError(f"n={n} must be between 1 and {n_max} (the intervened rows, and half the natural rows)")
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(N))
    ref, base = N[perm[:n]], N[perm[n:2 * n]]
    sub = I[rng.choice(len(I), n, replace=False)]
    return DivergenceResult(ot_divergence(sub, ref, method, p), ot_divergence(base, ref, method, p), n)
