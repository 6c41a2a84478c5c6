"""The baselines: a linear decoder (ridge voxels → pixels), the two-stage pipeline (ridge voxels → the feature
network's features → the same frozen diffusion model through a feature adapter), the shuffled-brain control, and the
linear *encoder* (ridge image → voxels) that ranks candidates.

Explained in chapters/neuroadapter/02_experiments.md. Ridge penalties are chosen by RidgeCV's efficient leave-one-out
on the training trials only.
"""
from __future__ import annotations

import numpy as np

from ..common.checks import check_int

__all__ = ["ALPHAS", "ridge_fit", "shuffled", "rank_by_encoder"]

#: The ridge penalties RidgeCV chooses from.
ALPHAS = (1.0, 10.0, 100.0, 1000.0, 10_000.0)


def ridge_fit(x, y):
    """A fitted ``RidgeCV`` from rows ``x`` (n, …) to rows ``y`` (n, …), both flattened per row.

    Explained in chapters/neuroadapter/02_experiments.md.
    """
    from sklearn.linear_model import RidgeCV

    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(x) != len(y) or len(x) < 2:
        raise ValueError(f"x and y must have the same number (>= 2) of rows; got {len(x)} and {len(y)}")
    return RidgeCV(alphas=ALPHAS).fit(x.reshape(len(x), -1), y.reshape(len(y), -1))


def shuffled(voxels, seed: int) -> np.ndarray:
    """The shuffled-brain control: each test image gets the voxels of another trial (a derangement).

    Explained in chapters/neuroadapter/02_experiments.md.
    """
    v = np.asarray(voxels)
    if len(v) < 2:
        raise ValueError(f"voxels must hold at least two trials; got {len(v)}")
    rng = np.random.default_rng(check_int("seed", seed, low=0))
    order = rng.permutation(len(v))
    other = np.empty(len(v), dtype=int)
    other[order] = np.roll(order, -1)                 # one cycle through a random order: nobody keeps their own
    return v[other]


def rank_by_encoder(encoder, candidates, voxels) -> tuple[np.ndarray, np.ndarray]:
    """Brain-encoder ranking: for each trial, the candidate (K, n, h, w) whose predicted voxels correlate best with
    the measured ``voxels`` (n, …). Returns ``(chosen images (n, h, w), chosen index (n,))``.

    Explained in chapters/neuroadapter/02_experiments.md.
    """
    c = np.asarray(candidates)
    v = np.asarray(voxels, dtype=np.float64).reshape(len(voxels), -1)
    if c.ndim != 4 or c.shape[1] != len(v):
        raise ValueError(f"candidates must be (K, n, h, w) with n = {len(v)} trials; got {c.shape}")
    k, n = c.shape[:2]
    pred = encoder.predict(c.reshape(k * n, -1).astype(np.float64)).reshape(k, n, -1)
    pz = (pred - pred.mean(-1, keepdims=True)) / (pred.std(-1, keepdims=True) + 1e-12)
    vz = (v - v.mean(-1, keepdims=True)) / (v.std(-1, keepdims=True) + 1e-12)
    best = (pz * vz[None]).mean(-1).argmax(0)
    return c[best, np.arange(n)], best
