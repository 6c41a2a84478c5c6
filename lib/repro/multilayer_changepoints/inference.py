"""Confidence intervals from the limiting distribution of the final estimator (Thm 2 and Sec. 3.1 of the paper).

Explained in chapters/multilayer-changepoints/03_inference.md.

kappa_k^2 (eta^_k - eta_k) -> argmin_r P_k(r), with P_k(r) = |r| + 2 sigma_left B_1(-r) for r < 0 and
r + 2 sigma_right B_2(r) for r > 0 (two independent standard Brownian motions), and
sigma^2 = Var <Psi_k, E(t)> the noise along the jump's direction Psi_k on each side.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..common import check_between, check_int, check_positive

__all__ = ["simulate_limit", "limit_quantiles", "jump_statistics", "confidence_intervals", "Interval"]


def _standard_walks(n_sim, n_grid, rng):
    """Two independent sets of n_sim standard random walks with unit steps, shape (2, n_sim, n_grid)."""
    return np.cumsum(rng.standard_normal((2, n_sim, n_grid)), axis=2)


def simulate_limit(sigma_left, sigma_right, n_sim=500, n_grid=1000, span=None, rng=None, walks=None) -> np.ndarray:
    """Draws of argmin_r P(r) by simulating the two-sided Brownian motion on a grid of n_grid steps per side
    over [-span, span] (default span = 60 max(sigma)^2; the 97.5% quantile is about 11 sigma^2).

    Explained in chapters/multilayer-changepoints/03_inference.md. `walks` (2, n_sim, n_grid) standard random
    walks may be passed to reuse one set of draws for several change points.
    """
    sl, sr = check_positive("sigma_left", sigma_left), check_positive("sigma_right", sigma_right)
    n_sim, n_grid = check_int("n_sim", n_sim, 1), check_int("n_grid", n_grid, 2)
    span = 60 * max(sl, sr) ** 2 if span is None else check_positive("span", span)
    if walks is None:
        walks = _standard_walks(n_sim, n_grid, np.random.default_rng(rng))
    elif walks.shape != (2, n_sim, n_grid):
        raise ValueError(f"walks must have shape (2, {n_sim}, {n_grid}), got {walks.shape}")
    h = span / n_grid
    r = h * np.arange(1, n_grid + 1)
    left = r + 2 * sl * np.sqrt(h) * walks[0]          # P(-r), r > 0
    right = r + 2 * sr * np.sqrt(h) * walks[1]         # P(r),  r > 0
    il, ir = left.argmin(axis=1), right.argmin(axis=1)
    lmin, rmin = left[np.arange(n_sim), il], right[np.arange(n_sim), ir]
    u = np.where(lmin < rmin, -r[il], r[ir])
    return np.where(np.minimum(lmin, rmin) > 0, 0.0, u)  # P(0) = 0


def limit_quantiles(sigma_left, sigma_right, alpha=0.05, n_sim=500, rng=None, walks=None):
    """The alpha/2 and 1 - alpha/2 quantiles of argmin_r P(r) (simulated).

    Explained in chapters/multilayer-changepoints/03_inference.md.
    """
    check_between("alpha", alpha, 0, 1)
    n_grid = 1000 if walks is None else walks.shape[2]
    u = simulate_limit(sigma_left, sigma_right, n_sim=n_sim, n_grid=n_grid, rng=rng, walks=walks)
    return np.quantile(u, alpha / 2), np.quantile(u, 1 - alpha / 2)


def jump_statistics(A, bounds, Phat, use=None):
    """Plug-in kappa^_k = ||P^_{k+1} - P^_k||_F, and sigma^_{k,left}, sigma^_{k,right}: the root mean square of
    <Psi^_k, A(t) - P^_segment> over the segment just left / right of change point k.

    Explained in chapters/multilayer-changepoints/03_inference.md. bounds = (0, eta~_1, ..., eta~_K, T). `use`
    (a boolean mask over time) restricts the sigma sums to the time points not used to estimate Phat.
    """
    A = np.asarray(A, dtype=float)
    Phat = np.asarray(Phat, dtype=float)
    if Phat.shape[0] != len(bounds) - 1:
        raise ValueError("Phat must hold one estimate per segment of `bounds`")
    diff = Phat[1:] - Phat[:-1]
    kappa = np.sqrt((diff ** 2).sum(axis=(1, 2, 3)))
    sig = np.zeros((kappa.size, 2))
    for k in range(kappa.size):
        psi = diff[k] / kappa[k] if kappa[k] > 0 else diff[k]
        for side, seg in enumerate((k, k + 1)):
            a, b = bounds[seg], bounds[seg + 1]
            t = np.arange(a, b) if use is None else np.arange(a, b)[np.asarray(use, dtype=bool)[a:b]]
            v = np.tensordot(A[t] - Phat[seg], psi, axes=3)
            sig[k, side] = np.sqrt((v ** 2).sum() / max(t.size - 1, 1))
    return kappa, sig


@dataclass(frozen=True)
class Interval:
    """A confidence interval [lower, upper] for one change point, with its plug-in jump size and noise levels.

    Explained in chapters/multilayer-changepoints/03_inference.md.
    """

    lower: float
    upper: float
    kappa: float
    sigma_left: float
    sigma_right: float

    @property
    def length(self) -> float:
        return self.upper - self.lower


def confidence_intervals(eta_hat, kappa, sigma, alpha=0.05, n_sim=500, rng=None):
    """[eta^ - q_{1-alpha/2} / kappa^2, eta^ - q_{alpha/2} / kappa^2] for each change point (Sec. 3.1).

    Explained in chapters/multilayer-changepoints/03_inference.md. `sigma` is (K, 2): left and right noise.
    """
    eta_hat, kappa, sigma = np.atleast_1d(eta_hat), np.atleast_1d(kappa), np.atleast_2d(sigma)
    if not (eta_hat.size == kappa.size == sigma.shape[0]) or (eta_hat.size and sigma.shape[1] != 2):
        raise ValueError("eta_hat, kappa and sigma (K x 2) must describe the same K change points")
    n_sim = check_int("n_sim", n_sim, 1)
    walks = _standard_walks(n_sim, 1000, np.random.default_rng(rng))   # one set of draws for all K points
    out = []
    for e, k, (sl, sr) in zip(eta_hat, kappa, sigma):
        ql, qh = limit_quantiles(max(sl, 1e-12), max(sr, 1e-12), alpha, n_sim, walks=walks)
        k2 = max(k, 1e-12) ** 2
        out.append(Interval(lower=e - qh / k2, upper=e - ql / k2, kappa=float(k), sigma_left=float(sl),
                            sigma_right=float(sr)))
    return out
