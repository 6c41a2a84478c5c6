"""Linear centred kernel alignment (CKA) between two sets of hidden states of the same examples.

Explained in chapters/moe-multilingual/02_experiments.md ("A peer: representation similarity"). With X (n, d) and
Y (n, d') column-centred, CKA = ||Y^T X||_F^2 / (||X^T X||_F ||Y^T Y||_F): 1 for representations equal up to a
rotation and scale, near 0 for unrelated ones. It is the dense-model view of "do two languages share computation".
"""
from __future__ import annotations

import numpy as np

__all__ = ["linear_cka"]


def linear_cka(x, y) -> float:
    """Linear CKA of two (n, d) matrices whose rows are the same n examples (chapters/moe-multilingual/02_experiments.md)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.ndim != 2 or y.ndim != 2 or len(x) != len(y) or len(x) < 2:
        raise ValueError(f"x and y must be (n, d) with the same n >= 2 rows, got {x.shape} and {y.shape}")
    x = x - x.mean(0)
    y = y - y.mean(0)
    num = np.linalg.norm(y.T @ x) ** 2
    den = np.linalg.norm(x.T @ x) * np.linalg.norm(y.T @ y)
    return float(num / den) if den > 0 else 0.0
