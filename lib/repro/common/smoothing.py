"""Running means of a curve: trailing (each point averages itself and the points before it) or centred.

Explained in chapters/scorer/02_experiments.md (trailing, for training statistics) and
chapters/moe-grokking/02_experiments.md (centred, for routing metrics between evaluations).
"""
from __future__ import annotations

import numpy as np

from .checks import check_int

__all__ = ["trailing_mean", "centred_mean"]


def trailing_mean(x, window: int) -> np.ndarray:
    """Mean over the last ``window`` values along the last axis, fewer at the start (a causal moving average).

    Explained in chapters/scorer/02_experiments.md. Vectorised with cumulative sums; works on (..., n) arrays.
    """
    x = np.asarray(x, dtype=float)
    window = check_int("window", window)
    c = np.cumsum(np.concatenate([np.zeros(x.shape[:-1] + (1,)), x], axis=-1), axis=-1)
    n = np.arange(1, x.shape[-1] + 1)
    lo = np.maximum(n - window, 0)
    return (c[..., n] - c[..., lo]) / (n - lo)


def centred_mean(values, width: int = 3) -> np.ndarray:
    """Centred running mean of a 1-d curve over ``width`` consecutive values (fewer at the ends).

    Explained in chapters/moe-grokking/02_experiments.md: the routing metrics are measured on a hundred samples and
    flicker from one evaluation to the next, so the chapter compares smoothed values (our choice) and a single noisy
    evaluation cannot make a peak.
    """
    values = np.asarray(values, dtype=float)
    if isinstance(width, bool) or int(width) < 1 or values.ndim != 1:
        raise ValueError(f"width must be a positive integer and values 1-d, got {width!r} and {values.shape}")
    h = int(width) // 2
    return np.array([values[max(0, i - h):i + h + 1].mean() for i in range(values.size)])
