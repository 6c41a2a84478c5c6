"""The whole method in one call: Stage I, Stage II, Eq. (5) and confidence intervals.

Explained in chapters/multilayer-changepoints/01_theory.md (the method) and 03_inference.md (the intervals).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..common import check_between, check_choice, check_int, check_positive
from ._checks import check_tensor
from .inference import confidence_intervals, jump_statistics
from .refine import least_squares_refine, local_refine
from .tensor import EIGEN_ORDERS
from .segmentation import StageOne, default_threshold, seeded_binary_segmentation, split_halves

__all__ = ["ChangePointResult", "detect_change_points"]


@dataclass(frozen=True)
class ChangePointResult:
    """What `detect_change_points` found: the final change points (times t after which the network changes,
    1-based, so A[:t] is before), the Stage I and Stage II estimates, and one confidence interval per point.

    Explained in chapters/multilayer-changepoints/01_theory.md.
    """

    change_points: np.ndarray
    stage_one: np.ndarray
    stage_two: np.ndarray
    intervals: list = field(default_factory=list)
    tau: float = float("nan")
    details: StageOne | None = None

    def __repr__(self) -> str:
        ci = ", ".join(f"[{i.lower:.2f}, {i.upper:.2f}]" for i in self.intervals)
        return f"ChangePointResult(change_points={self.change_points.tolist()}, intervals=[{ci}])"


def detect_change_points(A, ranks=(15, 15, None), c_tau=0.1, tau=None, directed=False, alpha=0.05,
                         n_sim=500, intervals=True, seed=0, eigen_order="signed") -> ChangePointResult:
    """Change points of a multilayer network sequence A of shape (T, n, n, L), with (1 - alpha) confidence intervals.

    Explained in chapters/multilayer-changepoints/01_theory.md and 03_inference.md. Steps:
    1. split A into its even and odd times (two independent halves of length T' = T // 2);
    2. Stage I: seeded binary segmentation on |<A~(t), B~(t)>| with threshold
       tau = c_tau n sqrt(L) log(T)^(3/2) (or `tau` if given);
    3. Stage II: local refinement along the TH-PCA direction (ranks; None means the mode's full size);
    4. Eq. (5): least-squares refinement on the full series, cross-fitted between the two halves;
    5. confidence intervals from the simulated limit distribution (`n_sim` draws), if `intervals`.
    Set `directed=True` for directed networks; otherwise every layer must be symmetric. `eigen_order` is how
    TH-PCA keeps eigenvectors: "signed" (ours) or "absolute" (the authors' code); 03_inference.md compares them.
    """
    A = check_tensor(A, directed=directed, min_T=8)
    T, n, _, L = A.shape
    check_between("alpha", alpha, 0, 1)
    check_choice("eigen_order", eigen_order, EIGEN_ORDERS)
    if len(ranks) != 3:
        raise ValueError(f"ranks must be (r1, r2, r3), got {ranks!r}")
    ranks = tuple(size if r is None else min(size, check_int("ranks", r, 1))   # None: the mode's full size
                  for size, r in zip((n, n, L), ranks))
    tau = default_threshold(n, L, T, c_tau) if tau is None else check_positive("tau", tau)
    A_half, B_half = split_halves(A)
    stage = seeded_binary_segmentation(A_half, B_half, tau, directed=directed)
    if stage.points.size == 0:
        empty = np.array([], dtype=int)
        return ChangePointResult(empty, empty, empty, [], tau, stage)
    refined = local_refine(A_half, B_half, stage.points, ranks, eigen_order=eigen_order)
    refined = np.unique(refined)
    stage_one, stage_two = 2 * stage.points, np.unique(np.clip(2 * refined, 1, T - 1))
    eta, Phat = least_squares_refine(A, stage_two, ranks, return_parts=True, eigen_order=eigen_order)
    cis = []
    if intervals:
        bounds = np.concatenate([[0], stage_two, [T]])
        even = np.arange(1, T + 1) % 2 == 0                 # Phat comes from the odd times
        kappa, sigma = jump_statistics(A, bounds, Phat, use=even)
        cis = confidence_intervals(eta, kappa, sigma, alpha=alpha, n_sim=n_sim, rng=seed)
    return ChangePointResult(eta, stage_one, stage_two, cis, tau, stage)
