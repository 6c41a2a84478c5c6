"""Gyro-permutation, as we read it from the predecessor's description: output channels by sampling, balanced
k-means and a linear assignment across tiles; input channels by a linear assignment across 2:4 groups.

Explained in chapters/flexhinm/01_theory.md and chapters/flexhinm/02_experiments.md. Permuting the output channels
of layer l changes which rows share a tile; it is undone by permuting the input columns of layer l + 1, so the
network computes the same function (:func:`permute_hidden`). Regrouping the 2:4 columns inside a tile needs no
compensation at all: a hierarchical kernel reads the kept columns by index.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..common import check_int
from .patterns import NM_M, NM_N, Layout, check_saliency, hier_layout, tile_costs

__all__ = ["balanced_kmeans", "GyroResult", "gyro_output", "gyro_input", "permute_hidden"]


def balanced_kmeans(X, k: int, iters: int = 5, seed: int = 0) -> np.ndarray:
    """Labels of ``X`` (n, d) in ``k`` clusters of exactly ``n / k`` points each.

    Explained in chapters/flexhinm/01_theory.md. Lloyd's iteration with the assignment step replaced by a linear
    assignment of points to ``n`` slots, ``n / k`` per centre (``scipy.optimize.linear_sum_assignment``).
    """
    X = np.asarray(X, dtype=float)
    k, iters = check_int("k", k), check_int("iters", iters)
    if X.ndim != 2 or X.shape[0] % k:
        raise ValueError(f"X must be 2-d with a number of rows divisible by k={k}; got shape {X.shape}")
    size = X.shape[0] // k
    rng = np.random.default_rng(seed)
    centres = X[rng.choice(X.shape[0], k, replace=False)]
    labels = np.zeros(X.shape[0], dtype=int)
    for _ in range(iters):
        d2 = ((X[:, None, :] - centres[None]) ** 2).sum(-1)          # (n, k)
        _, slot = linear_sum_assignment(np.repeat(d2, size, axis=1))
        labels = slot // size
        centres = np.stack([X[labels == c].mean(0) for c in range(k)])
    return labels


@dataclass
class GyroResult:
    """A row order, the 2:4 layout after the input step, and the pruned-saliency cost after every iteration.

    Explained in chapters/flexhinm/02_experiments.md. ``trace[0]`` is the cost of the identity order.
    """

    perm: np.ndarray
    layout: Layout | None = None
    trace: list = field(default_factory=list)
    n_output_steps: int = 0


def _counts(S, sparsity, n_dense):
    return n_dense, int(round(2 * (S.shape[1] * (1 - sparsity) - n_dense)))


def gyro_output(S, sparsity: float, v: int, n_dense: int = 0, sizes=None, max_fail: int = 3, seed: int = 0,
                kmeans_iters: int = 5) -> GyroResult:
    """The output-channel step: move groups of rows between tiles while the pruned saliency falls.

    Explained in chapters/flexhinm/01_theory.md. For each extraction size ``e`` in ``sizes`` (default
    ``v/2, v/4, ..., 1``): sample ``e`` rows from every tile, cluster them into one cluster per tile (balanced
    k-means on their normalised saliency rows), give each cluster to a tile by a linear assignment of the tiles'
    pruned saliency, and keep the move only if the total falls. ``max_fail`` rejected moves end a size.
    """
    S = check_saliency(S)
    v, max_fail = check_int("v", v), check_int("max_fail", max_fail)
    n_d, n_nm = _counts(S, sparsity, n_dense)
    hier_layout(S, sparsity, v, n_dense)                             # validates v, sparsity and n_dense
    nt = S.shape[0] // v
    sizes = [v >> i for i in range(1, v.bit_length()) if v >> i >= 1] if sizes is None else list(sizes)
    rng = np.random.default_rng(seed)
    tiles = np.arange(S.shape[0]).reshape(nt, v)
    cost = tile_costs(S[tiles], n_d, n_nm).sum()
    result = GyroResult(perm=tiles.ravel().copy(), trace=[float(cost)])
    for e in sizes:
        fails = 0
        while fails < max_fail and nt > 1:
            pick = np.argsort(rng.random((nt, v)), axis=1)
            out_pos, keep_pos = pick[:, :e], pick[:, e:]
            sampled = np.take_along_axis(tiles, out_pos, 1).ravel()
            stay = np.take_along_axis(tiles, keep_pos, 1)               # (nt, v - e)
            feats = S[sampled] / (S[sampled].sum(1, keepdims=True) + 1e-30)
            labels = balanced_kmeans(feats, nt, kmeans_iters, seed=int(rng.integers(2 ** 31)))
            clusters = np.stack([sampled[labels == c] for c in range(nt)])  # (nt, e)
            cand = np.concatenate([np.repeat(stay[:, None], nt, 1), np.repeat(clusters[None], nt, 0)], axis=2)
            C = tile_costs(S[cand.reshape(nt * nt, v)], n_d, n_nm).reshape(nt, nt)
            rows, cols = linear_sum_assignment(C)
            new = C[rows, cols].sum()
            if new < cost - 1e-12 * max(cost, 1.0):
                tiles, cost = cand[rows, cols], new
                result.n_output_steps += 1
            else:
                fails += 1
            result.trace.append(float(cost))
    result.perm = tiles.ravel().copy()
    return result


def _group_costs(T, rest, cand):
    """Pruned 2:4 saliency, per tile, of every candidate column (i) put into every group's three others (g)."""
    v = T.shape[1]
    Sr = np.take_along_axis(T[:, :, None, :], rest[:, None].repeat(v, 1), axis=3)   # (nt, v, G, 3)
    Sc = np.take_along_axis(T, cand[:, None].repeat(v, 1), axis=2)                    # (nt, v, G)
    four = np.concatenate([np.broadcast_to(Sr[:, :, None], Sr.shape[:2] + (Sc.shape[2],) + Sr.shape[2:]),
                           Sc[:, :, :, None, None].repeat(Sr.shape[2], 3)], axis=-1)  # (nt, v, i, g, 4)
    return np.sort(four, axis=-1)[..., :NM_M - NM_N].sum((1, -1))                     # (nt, i, g)


def gyro_input(S, layout: Layout, sweeps: int = 3) -> tuple[Layout, list]:
    """The input-channel step: in every tile, regroup the 2:4 columns to lower the pruned saliency.

    Explained in chapters/flexhinm/01_theory.md. For each position p of a group: take column p out of every group
    and put the columns back by a linear assignment of columns to groups (the identity is one of the choices, so
    the cost never rises). Returns the new layout and the total pruned saliency of the 2:4 region after each pass.
    """
    S = check_saliency(S)
    sweeps = check_int("sweeps", sweeps)
    T = S.reshape(-1, layout.v, S.shape[1])
    groups = layout.groups.copy()
    nt, G, _ = groups.shape

    def region_cost(g):
        Sg = np.take_along_axis(T[:, :, None, :], g[:, None].repeat(layout.v, 1), axis=3)
        return float(np.sort(Sg, axis=-1)[..., :NM_M - NM_N].sum())

    trace = [region_cost(groups)] if G else []
    for _ in range(sweeps if G > 1 else 0):
        for p in range(NM_M):
            rest = np.delete(groups, p, axis=2)
            cand = groups[:, :, p]
            C = _group_costs(T, rest, cand)
            for t in range(nt):
                ii, gg = linear_sum_assignment(C[t])
                groups[t, gg, p] = cand[t, ii]
            trace.append(region_cost(groups))
    return Layout(v=layout.v, dense=layout.dense.copy(), groups=groups), trace


def permute_hidden(weights, biases, layer: int, perm) -> tuple[list, list]:
    """Reorder the output channels of ``layer`` by ``perm`` and the input columns of ``layer + 1`` to match.

    Explained in chapters/flexhinm/01_theory.md. ``weights`` and ``biases`` are lists of arrays (out, in) and
    (out,); the network's function is unchanged (up to rounding) for any element-wise activation.
    """
    layer = check_int("layer", layer, low=0)
    if layer + 1 >= len(weights):
        raise ValueError(f"layer must have a next layer to compensate in; got layer={layer} of {len(weights)}")
    perm = np.asarray(perm)
    if sorted(perm.tolist()) != list(range(weights[layer].shape[0])):
        raise ValueError("perm must be a permutation of the layer's output channels")
    W, b = [w.copy() for w in weights], [x.copy() for x in biases]
    W[layer], b[layer] = W[layer][perm], b[layer][perm]
    W[layer + 1] = W[layer + 1][:, perm]
    return W, b
