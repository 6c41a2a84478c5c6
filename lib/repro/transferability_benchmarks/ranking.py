"""Ranking measures: weighted Kendall tau, the two dataset-agnostic static rankers, and fidelity.

Explained in chapters/transferability-benchmarks/01_theory.md.
"""
from __future__ import annotations

import numpy as np
from scipy.stats import weightedtau

__all__ = ["tau_w", "tau_w_direct", "static_size", "static_history", "fidelity", "pairwise_gaps", "rank_matrix"]


def _vectors(G, T):
    G, T = np.asarray(G, dtype=np.float64), np.asarray(T, dtype=np.float64)
    if G.ndim != 1 or G.shape != T.shape or len(G) < 2:
        raise ValueError(f"G and T must be 1-d arrays of the same length >= 2, got {G.shape} and {T.shape}")
    return G, T


def tau_w(G, T) -> float:
    """Weighted Kendall tau between ground truth ``G`` and scores ``T`` (``scipy.stats.weightedtau``, hyperbolic
    weights 1/(r+1) on the rank r, both rankings used for the weights, as the SITE literature computes it).

    Explained in chapters/transferability-benchmarks/01_theory.md.
    """
    G, T = _vectors(G, T)
    return float(weightedtau(G, T).statistic)


def tau_w_direct(G, T) -> float:
    """Weighted tau written out (Vigna 2015, the definition scipy implements, without ties): pairs weighted by
    w(i, j) = 1/(r_i+1) + 1/(r_j+1), r the rank by decreasing value, averaged over the rankings by G and by T.

    Explained in chapters/transferability-benchmarks/01_theory.md. The reference that ``tau_w`` is tested against.
    """
    G, T = _vectors(G, T)
    out = []
    for key in (G, T):
        r = np.empty(len(key))
        r[np.argsort(-key, kind="stable")] = np.arange(len(key))
        w = 1 / (r + 1)
        W = w[:, None] + w[None, :]
        sg, st = np.sign(G[:, None] - G[None, :]), np.sign(T[:, None] - T[None, :])
        iu = np.triu_indices(len(G), 1)
        num = np.sum((W * sg * st)[iu])
        den = np.sqrt(np.sum((W * sg ** 2)[iu]) * np.sum((W * st ** 2)[iu]))
        out.append(num / den)
    return float(np.mean(out))


def static_size(order_len: int) -> np.ndarray:
    """H1, the size-ordered static ranker: scores ``order_len``, ..., 1 for models listed biggest first.

    Explained in chapters/transferability-benchmarks/01_theory.md. It never looks at the target.
    """
    if not isinstance(order_len, (int, np.integer)) or order_len < 2:
        raise ValueError(f"order_len must be an integer >= 2, got {order_len!r}")
    return np.arange(order_len, 0, -1, dtype=np.float64)


def static_history(acc: np.ndarray, target: int) -> np.ndarray:
    """H2, the history ranker: each model's mean accuracy on the *other* targets (``acc`` is models x targets).

    Explained in chapters/transferability-benchmarks/01_theory.md. Our addition; one summary of the paper
    describes its static ranker this way.
    """
    acc = np.asarray(acc, dtype=np.float64)
    if acc.ndim != 2 or acc.shape[1] < 2:
        raise ValueError(f"acc must be models x targets with at least two targets, got shape {acc.shape}")
    if not 0 <= target < acc.shape[1]:
        raise ValueError(f"target must index a column of acc, got {target!r}")
    return np.delete(acc, target, axis=1).mean(1)


def pairwise_gaps(G, T) -> tuple[np.ndarray, np.ndarray]:
    """(Delta Acc, Delta T) over all ordered pairs of distinct models.

    Explained in chapters/transferability-benchmarks/01_theory.md.
    """
    G, T = _vectors(G, T)
    i, j = np.where(~np.eye(len(G), dtype=bool))
    return G[i] - G[j], T[i] - T[j]


def fidelity(G, T) -> float:
    """Fidelity: the Pearson correlation of accuracy gaps with score gaps over all model pairs.

    Explained in chapters/transferability-benchmarks/01_theory.md. Over all ordered pairs it equals the Pearson
    correlation of G with T (the theory page shows why); NaN if either is constant.
    """
    dA, dT = pairwise_gaps(G, T)
    if np.all(dA == 0) or np.all(dT == 0):
        return float("nan")
    return float(np.corrcoef(dA, dT)[0, 1])


def rank_matrix(acc) -> np.ndarray:
    """Rank (1 = best) of every model on every target, from a models x targets accuracy matrix.

    Explained in chapters/transferability-benchmarks/02_experiments.md.
    """
    acc = np.asarray(acc, dtype=np.float64)
    if acc.ndim != 2:
        raise ValueError(f"acc must be models x targets, got shape {acc.shape}")
    return (-acc).argsort(0).argsort(0) + 1
