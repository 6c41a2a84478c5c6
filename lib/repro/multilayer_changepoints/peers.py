"""Peers from the `ruptures` package, on the same sequences, standing in for the paper's R competitors.

Explained in chapters/multilayer-changepoints/02_localisation.md.

- "frob": the layer-wise Frobenius norms ||A_l(t)||_F (a T x L series), as the paper's "frob." inputs to
  gSeg/kerSeg; searched by binary segmentation with an L2 cost and a BIC penalty (noise scale by MAD).
- "nets": the flattened networks (a T x n^2 L series), as the paper's "nets." inputs; searched by PELT with
  an RBF-kernel cost (ruptures' median-heuristic bandwidth), the nearest ruptures has to kerSeg. Its penalty
  is the gain of the best single split on a time-permuted copy of the same sequence (permutation destroys the
  change points, so this is the size of a gain that noise alone produces), in the spirit of kerSeg's
  permutation p-values.
Neither is told the true number of change points.
"""
from __future__ import annotations

import numpy as np

__all__ = ["layer_frobenius", "ruptures_frob", "ruptures_nets"]


def layer_frobenius(A) -> np.ndarray:
    """||A_l(t)||_F for each time and layer: shape (T, L).

    Explained in chapters/multilayer-changepoints/02_localisation.md.
    """
    A = np.asarray(A, dtype=float)
    if A.ndim != 4:
        raise ValueError(f"A must have shape (T, n, n, L), got {A.shape}")
    return np.sqrt((A ** 2).sum(axis=(1, 2)))


def ruptures_frob(A, min_size=2) -> np.ndarray:
    """ruptures Binseg (L2 cost) on standardised layer-wise Frobenius norms, penalty 2 L log T (BIC, unit noise).

    Explained in chapters/multilayer-changepoints/02_localisation.md. Returns change points t (A[:t] before).
    """
    import ruptures as rpt

    x = layer_frobenius(A)
    scale = np.median(np.abs(np.diff(x, axis=0) - np.median(np.diff(x, axis=0), axis=0)), axis=0) * 1.4826 / np.sqrt(2)
    x = (x - x.mean(axis=0)) / np.where(scale > 0, scale, 1.0)
    T, L = x.shape
    bkps = rpt.Binseg(model="l2", min_size=min_size, jump=1).fit(x).predict(pen=2 * L * np.log(T))
    return np.array(bkps[:-1], dtype=int)


def ruptures_nets(A, min_size=2, pen=None, rng=0) -> np.ndarray:
    """ruptures KernelCPD (RBF kernel, PELT) on the flattened networks; the penalty is the best single-split gain
    on a time-permuted copy of A unless `pen` is given.

    Explained in chapters/multilayer-changepoints/02_localisation.md. Returns change points t (A[:t] before).
    """
    import ruptures as rpt

    A = np.asarray(A, dtype=float)
    if A.ndim != 4:
        raise ValueError(f"A must have shape (T, n, n, L), got {A.shape}")
    x = A.reshape(A.shape[0], -1)
    params = None
    if pen is None:
        xp = x[np.random.default_rng(rng).permutation(x.shape[0])]
        algo = rpt.KernelCPD(kernel="rbf", min_size=min_size).fit(xp)
        one = algo.predict(n_bkps=1)
        pen = algo.cost.sum_of_costs([x.shape[0]]) - algo.cost.sum_of_costs(one)
        # The median-heuristic bandwidth is the median of all pairwise squared distances; a permutation of the rows
        # only reorders them (each pair's distance is computed the same way), so x has the bandwidth just computed
        # on xp. Passing it on spares the second fit a pass over all pairs of the T x n^2 L series.
        params = {"gamma": algo.cost.gamma}
    bkps = rpt.KernelCPD(kernel="rbf", min_size=min_size, params=params).fit(x).predict(pen=pen)
    return np.array(bkps[:-1], dtype=int)
