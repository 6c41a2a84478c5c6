"""Low-rank estimation of a probability tensor: HeteroPCA and TH-PCA (Tucker, via HeteroPCA per mode).

Explained in chapters/multilayer-changepoints/01_theory.md ("Why a low-rank tensor estimate").

For a tensor Y (n1 x n2 x n3) and ranks (r1, r2, r3): for each mode s, HeteroPCA finds the top r_s
eigenvectors U_s of M_s(Y) M_s(Y)^T after deleting its diagonal (which noise inflates), filling the diagonal
back in from the current low-rank fit a few times. The estimate is Y x_1 U1U1^T x_2 U2U2^T x_3 U3U3^T,
clipped to a range (the probabilities' [0, 1], or the CUSUM's bounds).
"""
from __future__ import annotations

import numpy as np

from ..common import check_choice, check_int

__all__ = ["EIGEN_ORDERS", "unfold", "hetero_pca", "th_pca"]

#: How HeteroPCA picks its rank-r eigenvectors: "signed" keeps the r largest eigenvalues (ours), "absolute" the r
#: largest in absolute value (HeteroPCA's best rank-r approximation, and the authors' R code).
EIGEN_ORDERS = ("signed", "absolute")


def unfold(Y, mode) -> np.ndarray:
    """Mode-`mode` matricisation M_s(Y): the fibres along axis `mode` become columns, shape (n_mode, rest).

    Explained in chapters/multilayer-changepoints/01_theory.md.
    """
    Y = np.asarray(Y)
    if not 0 <= mode < Y.ndim:
        raise ValueError(f"mode must be in [0, {Y.ndim}), got {mode}")
    return np.moveaxis(Y, mode, 0).reshape(Y.shape[mode], -1)


def _top_eigen(N, rank, eigen_order):
    """The `rank` leading eigenpairs of the symmetric N, by signed or by absolute eigenvalue."""
    w, V = np.linalg.eigh(N)
    keep = np.argsort(np.abs(w) if eigen_order == "absolute" else w)[-rank:]
    return w[keep], V[:, keep]


def hetero_pca(M, rank, n_iter=20, tol=1e-6, eigen_order="signed") -> np.ndarray:
    """Top-`rank` left singular vectors of M (rows x cols) by HeteroPCA: diagonal-deleted Gram, refilled.

    Explained in chapters/multilayer-changepoints/01_theory.md. Returns U of shape (rows, rank). Deleting the
    diagonal can make eigenvalues negative; `eigen_order` (one of EIGEN_ORDERS) says whether the rank-r fit keeps
    the largest ("signed", ours) or the largest in absolute value ("absolute", the algorithm's and the authors' code).
    """
    M = np.asarray(M, dtype=float)
    if M.ndim != 2:
        raise ValueError(f"M must be a matrix, got shape {M.shape}")
    rank = check_int("rank", rank, 1)
    check_choice("eigen_order", eigen_order, EIGEN_ORDERS)
    if rank >= M.shape[0]:
        return np.eye(M.shape[0])                      # full rank: the projection is the identity
    G = M @ M.T
    idx = np.arange(G.shape[0])
    N = G.copy()
    N[idx, idx] = 0.0
    for _ in range(n_iter):
        w, U = _top_eigen(N, rank, eigen_order)
        low = (U * w) @ U.T
        change = np.abs(low[idx, idx] - N[idx, idx]).max()
        N[idx, idx] = low[idx, idx]
        if change < tol * max(1.0, np.abs(N).max()):
            break
    return _top_eigen(N, rank, eigen_order)[1]


def th_pca(Y, ranks, clip=None, n_iter=20, eigen_order="signed") -> np.ndarray:
    """TH-PCA estimate of a tensor Y of shape (n1, n2, n3) with Tucker ranks `ranks`, clipped to `clip`=(lo, hi).

    Explained in chapters/multilayer-changepoints/01_theory.md. A rank at least the mode's size keeps that
    mode untouched (the paper uses rank L for the layer mode). `eigen_order` is passed to :func:`hetero_pca`.
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
        U = hetero_pca(unfold(Y, mode), r, n_iter=n_iter, eigen_order=eigen_order)
        out = np.moveaxis(np.tensordot(U @ U.T, np.moveaxis(out, mode, 0), axes=(1, 0)), 0, mode)
    if clip is not None:
        lo, hi = clip
        if lo > hi:
            raise ValueError(f"clip must be (lo, hi) with lo <= hi, got {clip!r}")
        out = np.clip(out, lo, hi)
    return out
