"""Sparsity patterns of one weight matrix: unstructured, N:M, vector, HiNM and the three-region FlexHiNM.

Explained in chapters/flexhinm/01_theory.md and chapters/flexhinm/02_experiments.md. A weight matrix is
``W`` with shape (O, I) (torch's ``Linear`` convention: rows are output channels). Every function here takes a
*saliency* ``S`` of the same shape (we use ``W**2``) and returns a boolean mask of the weights kept.

The hierarchical patterns cut the rows into tiles of ``v`` consecutive output channels. Column ``j`` of a tile is a
``v x 1`` *vector*. Within each tile the vectors are ranked by their summed saliency and split into three regions:
the first ``n_dense`` are kept whole (4:4), the next ``n_nm`` are kept 2:4 row by row (in groups of four vectors),
and the rest are removed (0:4). HiNM is the case ``n_dense = 0``. A :class:`Layout` stores, per tile, which columns
are dense and how the 2:4 columns are grouped; the grouping is free (the kernel gathers columns by index), which is
what the input-channel step of the gyro-permutation changes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..common import check_between, check_int

__all__ = ["Layout", "check_saliency", "unstructured_mask", "nm_mask", "vector_mask", "dense_counts",
           "hier_layout", "layout_mask", "layout_cost", "tile_costs", "best_dense_count", "retained",
           "pattern_violations", "NM_N", "NM_M"]

NM_N, NM_M = 2, 4          # the N:M pattern of the middle region (what sparse tensor cores run)


def check_saliency(S, name: str = "S") -> np.ndarray:
    """``S`` as a 2-d float64 array of non-negative finite numbers; ValueError naming ``name`` otherwise.

    Explained in chapters/flexhinm/02_experiments.md.
    """
    S = np.asarray(S, dtype=float)
    if S.ndim != 2 or S.size == 0:
        raise ValueError(f"{name} must be a non-empty 2-d array (out, in); got shape {S.shape}")
    if not np.all(np.isfinite(S)) or np.any(S < 0):
        raise ValueError(f"{name} must hold non-negative finite saliencies")
    return S


def _check_density(density) -> float:
    return check_between("density", density, 0.0, 1.0, closed="right")


def unstructured_mask(S, density: float) -> np.ndarray:
    """Keep the ``round(density * S.size)`` most salient weights of the whole matrix (magnitude pruning).

    Explained in chapters/flexhinm/01_theory.md.
    """
    S, density = check_saliency(S), _check_density(density)
    k = int(round(density * S.size))
    flat = np.zeros(S.size, dtype=bool)
    flat[np.argsort(-S.ravel(), kind="stable")[:k]] = True
    return flat.reshape(S.shape)


def nm_mask(S, n: int, m: int) -> np.ndarray:
    """Row-wise N:M: in every group of ``m`` consecutive weights of a row keep the ``n`` most salient.

    Explained in chapters/flexhinm/01_theory.md. The number of columns must be a multiple of ``m``.
    """
    S = check_saliency(S)
    m, n = check_int("m", m), check_int("n", n, low=0)
    if n > m:
        raise ValueError(f"n must be at most m, got n={n}, m={m}")
    if S.shape[1] % m:
        raise ValueError(f"the number of columns ({S.shape[1]}) must be a multiple of m={m}")
    G = S.reshape(S.shape[0], -1, m)
    order = np.argsort(-G, axis=-1, kind="stable")
    keep = np.zeros_like(G, dtype=bool)
    np.put_along_axis(keep, order[..., :n], True, axis=-1)
    return keep.reshape(S.shape)


def _tiles(S, v):
    v = check_int("v", v)
    if S.shape[0] % v:
        raise ValueError(f"the number of rows ({S.shape[0]}) must be a multiple of v={v}")
    return S.reshape(-1, v, S.shape[1])


def vector_mask(S, density: float, v: int) -> np.ndarray:
    """Vector sparsity: in each tile of ``v`` rows keep the ``density * I`` columns with the largest summed saliency.

    Explained in chapters/flexhinm/01_theory.md. ``density * I`` must be a whole number.
    """
    S, density = check_saliency(S), _check_density(density)
    T = _tiles(S, v)
    k = density * S.shape[1]
    if abs(k - round(k)) > 1e-9:
        raise ValueError(f"density * in_features must be whole, got {k}")
    order = np.argsort(-T.sum(1), axis=1, kind="stable")[:, :int(round(k))]
    keep = np.zeros((T.shape[0], S.shape[1]), dtype=bool)
    np.put_along_axis(keep, order, True, axis=1)
    return np.repeat(keep[:, None, :], v, axis=1).reshape(S.shape)


def dense_counts(in_features: int, sparsity: float) -> list[int]:
    """The feasible numbers of dense vectors per tile at ``sparsity``: ``1 - s = rho_d + rho_nm / 2``.

    Explained in chapters/flexhinm/01_theory.md. Counts are multiples of 4, as is the 2:4 count
    ``n_nm = 2 (I (1 - s) - n_d)``, and ``max(0, I(1 - 2s)) <= n_d <= I(1 - s)``.
    """
    I = check_int("in_features", in_features)
    s = check_between("sparsity", sparsity, 0.0, 1.0, closed="left")
    kept = I * (1 - s)                         # kept weights per row, in units of one column
    out = []
    for n_d in range(0, I + 1, NM_M):
        n_nm = 2 * (kept - n_d)
        if n_nm < -1e-9 or n_d + n_nm > I + 1e-9:
            continue
        if abs(n_nm - round(n_nm)) < 1e-9 and round(n_nm) % NM_M == 0:
            out.append(n_d)
    if not out:
        raise ValueError(f"no three-region split of {I} columns gives sparsity {s}")
    return out


@dataclass
class Layout:
    """Per tile: the dense columns (T, n_dense) and the 2:4 groups (T, G, 4) of a hierarchical pattern.

    Explained in chapters/flexhinm/01_theory.md. Columns in neither are removed in that tile.
    """

    v: int
    dense: np.ndarray
    groups: np.ndarray

    @property
    def n_dense(self) -> int:
        """Dense vectors per tile."""
        return self.dense.shape[1]


def hier_layout(S, sparsity: float, v: int, n_dense: int = 0) -> Layout:
    """Rank the vectors of each tile and assign the three regions; 2:4 groups in ascending column order.

    Explained in chapters/flexhinm/01_theory.md. ``n_dense=0`` is HiNM.
    """
    S = check_saliency(S)
    T = _tiles(S, v)
    feasible = dense_counts(S.shape[1], sparsity)
    if n_dense not in feasible:
        raise ValueError(f"n_dense must be one of {feasible} at sparsity {sparsity}, got {n_dense!r}")
    n_nm = int(round(2 * (S.shape[1] * (1 - sparsity) - n_dense)))
    rank = np.argsort(-T.sum(1), axis=1, kind="stable")
    nm = np.sort(rank[:, n_dense:n_dense + n_nm], axis=1)
    return Layout(v=v, dense=rank[:, :n_dense], groups=nm.reshape(T.shape[0], -1, NM_M))


def layout_mask(S, layout: Layout) -> np.ndarray:
    """The mask of a layout: dense columns whole, top-2 of each row in every 2:4 group, nothing else.

    Explained in chapters/flexhinm/01_theory.md.
    """
    S = check_saliency(S)
    T = _tiles(S, layout.v)
    nt, v, I = T.shape
    keep = np.zeros(T.shape, dtype=bool)
    ti = np.arange(nt)[:, None]
    keep[ti, :, layout.dense] = True                             # (nt, n_dense, v) broadcast
    g = layout.groups                                            # (nt, G, 4)
    if g.size:
        Sg = np.take_along_axis(T[:, :, None, :], g[:, None, :, :].repeat(v, 1), axis=3)  # (nt, v, G, 4)
        top = np.argsort(-Sg, axis=-1, kind="stable")[..., :NM_N]
        cols = np.take_along_axis(g[:, None, :, :].repeat(v, 1), top, axis=-1)           # (nt, v, G, 2)
        rows = np.arange(v)[None, :, None, None]
        keep[np.arange(nt)[:, None, None, None], rows, cols] = True
    return keep.reshape(S.shape)


def tile_costs(T, n_dense: int, n_nm: int) -> np.ndarray:
    """Pruned saliency of each tile in a batch ``T`` (B, v, I) under the default three-region layout.

    Explained in chapters/flexhinm/02_experiments.md. This is the cost the output-channel step minimises.
    """
    B, v, I = T.shape
    rank = np.argsort(-T.sum(1), axis=1, kind="stable")
    nm = np.sort(rank[:, n_dense:n_dense + n_nm], axis=1)
    kept = np.take_along_axis(T.sum(1), rank[:, :n_dense], axis=1).sum(1)
    if n_nm:
        Sg = np.take_along_axis(T, nm[:, None, :].repeat(v, 1), axis=2).reshape(B, v, -1, NM_M)
        kept = kept + np.sort(Sg, axis=-1)[..., NM_M - NM_N:].sum((1, 2, 3))
    return T.sum((1, 2)) - kept


def layout_cost(S, layout: Layout) -> float:
    """Pruned saliency (the sum of ``S`` over removed weights) of a layout.

    Explained in chapters/flexhinm/02_experiments.md.
    """
    S = check_saliency(S)
    return float(S[~layout_mask(S, layout)].sum())


def best_dense_count(S, sparsity: float, v: int) -> tuple[int, dict]:
    """FlexHiNM's region allocation, our stand-in: the dense count with the least pruned saliency.

    Explained in chapters/flexhinm/01_theory.md. The paper's closed-form boundary rule was not found; this 1-D
    search over the feasible counts of :func:`dense_counts` replaces it. Returns the count and {count: cost}.
    """
    S = check_saliency(S)
    costs = {n_d: layout_cost(S, hier_layout(S, sparsity, v, n_d)) for n_d in dense_counts(S.shape[1], sparsity)}
    return min(costs, key=lambda k: (costs[k], k)), costs


def retained(S, mask) -> float:
    """The fraction of total saliency a mask keeps.

    Explained in chapters/flexhinm/01_theory.md.
    """
    S = check_saliency(S)
    return float((S * mask).sum() / S.sum())


def pattern_violations(mask, layout: Layout) -> int:
    """How many places break the hierarchical pattern: weights kept outside the dense and 2:4 columns of their
    tile, rows of a 2:4 group with more than two weights, columns used twice in a tile.

    Explained in chapters/flexhinm/02_experiments.md.
    """
    mask = np.asarray(mask, dtype=bool)
    T = mask.reshape(-1, layout.v, mask.shape[1])
    bad = 0
    for t in range(T.shape[0]):
        dense, groups = layout.dense[t], layout.groups[t]
        used = np.concatenate([dense, groups.ravel()])
        bad += len(used) - len(np.unique(used))
        other = np.setdiff1d(np.arange(mask.shape[1]), used)
        bad += int(T[t][:, other].sum())
        bad += int((~T[t][:, dense]).sum())
        if groups.size:
            bad += int((T[t][:, groups].sum(-1) > NM_N).sum())
    return bad
