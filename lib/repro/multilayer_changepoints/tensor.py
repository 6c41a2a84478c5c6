"""Low-rank estimation of a probability tensor: HeteroPCA and TH-PCA (Tucker, via HeteroPCA per mode).

Explained in chapters/multilayer-changepoints/01_theory.md ("Why a low-rank tensor estimate").

For a tensor Y (n1 x n2 x n3) and ranks (r1, r2, r3): for each mode s, HeteroPCA finds the top r_s
eigenvectors U_s of M_s(Y) M_s(Y)^T after deleting its diagonal (which noise inflates), filling the diagonal
back in from the current low-rank fit a few times. The estimate is Y x_1 U1U1^T x_2 U2U2^T x_3 U3U3^T,
clipped to a range (the probabilities' [0, 1], or the CUSUM's bounds).
"""
from __future__ import annotations

import numpy as np

from ..common import check_int

__all__ = ["unfold", "hetero_pca", "th_pca"]


def unfold(Y, mode) -> np.ndarray:
    """Mode-`mode` matricisation M_s(Y): the fibres along axis `mode` become columns, shape (n_mode, rest).

    Explained in chapters/multilayer-changepoints/01_theory.md.
    """
    Y = np.asarray(Y)
    if not 0 <= mode < Y.ndim:
        raise ValueError(f"mode must be in [0, {Y.ndim}), got {mode}")
    return np.moveaxis(Y, mode, 0).reshape(Y.shape[mode], -1)


def hetero_pca(M, rank, n_iter=20, tol=1e-6) -> np.ndarray:
    """Top-`rank` left singular vectors of M (rows x cols) by HeteroPCA: diagonal-deleted Gram, refilled.

    Explained in chapters/multilayer-changepoints/01_theory.md. Returns U of shape (rows, rank).
    """
    M = np.asarray(M, dtype=float)
    if M.ndim != 2:
        raise ValueError(f"M must be a matrix, got shape {M.shape}")
    rank = check_int("rank", rank, 1)
    if rank >= M.shape[0]:
        return np.eye(M.shape[0])                      # full rank: the projection is the identity
    G = M @ M.T
    idx = np.arange(G.shape[0])
    N = G.copy()
    N[idx, idx] = 0.0
    for _ in range(n_iter):
        w, V = np.linalg.eigh(N)
        U = V[:, -rank:]
        low = (U * w[-rank:]) @ U.T
        change = np.abs(low[idx, idx] - N[idx, idx]).max()
        N[idx, idx] = low[idx, idx]
        if change < tol * max(1.0, np.abs(N).max()):
            break
    w, V = np.linalg.eigh(N)
    return V[:, -rank:]


def th_pca(Y, ranks, clip=None, n_iter=20) -> np.ndarray:
    """TH-PCA estimate of a tensor Y of shape (n1, n2, n3) with Tucker ranks `ranks`, clipped to `clip`=(lo, hi).

    Explained in chapters/multilayer-changepoints/01_theory.md. A rank at least the mode's size keeps that
    mode untouched (the paper uses rank L for the layer mode).
    """
    Y = np.asarray(Y, dtype=float)
    if Y.ndim != 3:
        raise ValueError(f"Y must be a 3-way tensor (n, n, L), got shape {Y.shape}")
    if len(ranks) != 3:
        raise ValueError(f"ranks must give one rank per mode, got {ranks!r}")
    out = Y
    for mode, r in enumerate(ranks):
        r = check_int("ranks", int(r), 1)
        if r >= Y.shape[mode]:
            continue
        U = hetero_pca(unfold(Y, mode), r, n_iter=n_iter)
        out = np.moveaxis(np.tensordot(U @ U.T, np.moveaxis(out, mode, 0), axes=(1, 0)), 0, mode)
    if clip is not None:
        lo, hi = clip
        if lo > hi:
            raise ValueError(f"clip must be (lo, hi) with lo <= hi, got {clip!r}")
        out = np.clip(out, lo, hi)
    return out
