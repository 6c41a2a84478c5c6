"""Stage II (local refinement along a TH-PCA direction) and the final least-squares step, Eq. (5).

Explained in chapters/multilayer-changepoints/01_theory.md ("Local refinement").
"""
from __future__ import annotations

import numpy as np

from ._checks import check_points
from .cusum import cusum, scalar_cusum
from .tensor import th_pca

__all__ = ["local_windows", "local_refine", "segment_estimates", "least_squares_refine"]


def local_windows(points, T) -> np.ndarray:
    """Windows (s_k, e_k] = (floor((b_{k-1}+b_k)/2), ceil((b_k+b_{k+1})/2)] around points b_k (b_0 = 0, b_{K+1} = T).

    Explained in chapters/multilayer-changepoints/01_theory.md.
    """
    b = np.concatenate([[0], check_points("points", points, T), [T]])
    return np.stack([np.floor((b[:-2] + b[1:-1]) / 2), np.ceil((b[1:-1] + b[2:]) / 2)], axis=1).astype(int)


def local_refine(A_half, B_half, points, ranks, return_scans=False, eigen_order="signed"):
    """Stage II on the half series: for each b_k, P^ = TH-PCA of B~^{s,e}(b_k), clipped to the CUSUM's bound;
    the refined point maximises |<P^/||P^||, A~^{s,e}(t)>| over s < t < e.

    Explained in chapters/multilayer-changepoints/01_theory.md. Returns refined points (and the scans).
    `eigen_order` is TH-PCA's (see :func:`repro.multilayer_changepoints.hetero_pca`).
    """
    A_half, B_half = np.asarray(A_half, dtype=float), np.asarray(B_half, dtype=float)
    Tp = A_half.shape[0]
    out, scans = [], []
    for (s, e), b in zip(local_windows(points, Tp), np.atleast_1d(points)):
        if e - s < 3:
            out.append(int(b)), scans.append((np.array([b]), np.array([0.0])))
            continue
        bound = np.sqrt((e - b) * (b - s) / (e - s))
        P = th_pca(cusum(B_half, s, e, b), ranks, clip=(-bound, bound), eigen_order=eigen_order)
        norm = np.linalg.norm(P)
        if norm == 0:
            out.append(int(b)), scans.append((np.array([b]), np.array([0.0])))
            continue
        c = np.tensordot(A_half, P / norm, axes=3)      # <P^/||P^||, A(u)> for every u: a scalar series
        scan = np.abs(scalar_cusum(c, s, e))
        t = np.arange(s + 1, e)
        out.append(int(t[np.argmax(scan)])), scans.append((t, scan))
    pts = np.array(out, dtype=int)
    return (pts, scans) if return_scans else pts


def segment_estimates(B, bounds, ranks):
    """P^{a,b} = TH-PCA of the mean of B over (a, b], clipped to [0, 1], for consecutive `bounds` a < b.

    Explained in chapters/multilayer-changepoints/01_theory.md. B is (T, n, n, L) with 1-based times.
    """
    B = np.asarray(B, dtype=float)
    return np.stack([th_pca(B[a:b].mean(axis=0), ranks, clip=(0.0, 1.0)) for a, b in zip(bounds[:-1], bounds[1:])])


def least_squares_refine(A, points, ranks, return_parts=False, eigen_order="signed"):
    """The final estimator, Eq. (5): for each eta~_k, scan t in the window (s~_k, e~_k) and minimise
    sum_{u<=t} ||A(u) - P^_left||^2 + sum_{u>t} ||A(u) - P^_right||^2, with P^ the TH-PCA segment means.

    Explained in chapters/multilayer-changepoints/01_theory.md. The paper scores one half of the data against
    segment means estimated from the other half. We cross-fit: even times are scored against means from the odd
    times and odd times against means from the even times, so every time point is used (full time resolution) and
    none is scored against a mean it helped estimate. Returns the estimates (and, with `return_parts`, the
    segment means from the odd times, shape (K+1, n, n, L), which the confidence intervals use). `eigen_order` is
    TH-PCA's.
    """
    A = np.asarray(A, dtype=float)
    T = A.shape[0]
    pts = check_points("points", points, T)
    bounds = np.concatenate([[0], pts, [T]])
    odd = (np.arange(1, T + 1) % 2 == 1)

    def means(mask):
        out = []
        for a, b in zip(bounds[:-1], bounds[1:]):
            use = np.arange(a, b)[mask[a:b]]
            use = use if use.size else np.arange(a, b)
            out.append(th_pca(A[use].mean(axis=0), ranks, clip=(0.0, 1.0), eigen_order=eigen_order))
        return np.stack(out)

    P_odd, P_even = means(odd), means(~odd)
    out = []
    for k, (s, e) in enumerate(local_windows(pts, T)):
        u = np.arange(s, e)                              # 0-based indices of times s+1..e
        # ||A-P||^2 = ||A||^2 - 2<A,P> + ||P||^2; ||A(u)||^2 is the same on both sides and drops out
        pair_o, pair_e = P_odd[[k, k + 1]], P_even[[k, k + 1]]
        c_o = -2 * np.tensordot(A[u], pair_o, axes=([1, 2, 3], [1, 2, 3])) + (pair_o ** 2).sum(axis=(1, 2, 3))
        c_e = -2 * np.tensordot(A[u], pair_e, axes=([1, 2, 3], [1, 2, 3])) + (pair_e ** 2).sum(axis=(1, 2, 3))
        cost = np.where(odd[u][:, None], c_e, c_o)      # odd times scored against even-time means, and back
        t = np.arange(s + 1, e)                          # candidate t, s < t < e
        cl, cr = np.cumsum(cost[:, 0]), np.cumsum(cost[:, 1])
        obj = cl[t - s - 1] + (cr[-1] - cr[t - s - 1])
        out.append(int(t[np.argmin(obj)]) if t.size else int(pts[k]))
    eta = np.array(out, dtype=int)
    return (eta, P_odd) if return_parts else eta
