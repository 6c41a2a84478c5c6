"""Table-1 metrics: |K^ - K|, the two one-sided Hausdorff distances and the covering metric.

Explained in chapters/multilayer-changepoints/02_localisation.md.
"""
from __future__ import annotations

import numpy as np

from ..common import check_int

__all__ = ["one_sided_hausdorff", "covering", "evaluate"]


def one_sided_hausdorff(A, B) -> float:
    """d(A | B) = max_{b in B} min_{a in A} |a - b|: how far B's worst point is from A. As in the paper's
    tables, it is inf when exactly one of the two sets is empty, and 0 when both are.

    Explained in chapters/multilayer-changepoints/02_localisation.md.
    """
    A, B = np.atleast_1d(np.asarray(A, dtype=float)), np.atleast_1d(np.asarray(B, dtype=float))
    if A.size == 0 and B.size == 0:
        return 0.0
    if A.size == 0 or B.size == 0:
        return float("inf")
    return float(np.abs(A[:, None] - B[None, :]).min(axis=0).max())


def covering(true_points, est_points, T) -> float:
    """Covering metric C(G, G^) = (1/T) sum_{I in G} |I| max_{J in G^} |I n J| / |I u J| of the true partition G
    by the estimated one G^ (1 = perfect).

    Explained in chapters/multilayer-changepoints/02_localisation.md.
    """
    check_int("T", T)
    g = np.concatenate([[0], np.sort(true_points), [T]]).astype(int)
    h = np.concatenate([[0], np.sort(est_points), [T]]).astype(int)
    a0, a1 = g[:-1, None], g[1:, None]
    b0, b1 = h[None, :-1], h[None, 1:]
    inter = np.clip(np.minimum(a1, b1) - np.maximum(a0, b0), 0, None)
    union = (a1 - a0) + (b1 - b0) - inter
    return float(((a1 - a0)[:, 0] * (inter / union).max(axis=1)).sum() / T)


def evaluate(true_points, est_points, T) -> dict:
    """The Table-1 row of one trial: abs_K_error, d_hat_given_true = d(C^|C), d_true_given_hat = d(C|C^), covering.

    Explained in chapters/multilayer-changepoints/02_localisation.md. d(C^|C) is large when a true change point
    is missed; d(C|C^) is large when a spurious one is found.
    """
    return {"abs_K_error": abs(len(est_points) - len(true_points)),
            "d_hat_given_true": one_sided_hausdorff(est_points, true_points),
            "d_true_given_hat": one_sided_hausdorff(true_points, est_points),
            "covering": covering(true_points, est_points, T)}
