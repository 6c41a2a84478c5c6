"""Stage I: seeded intervals and seeded binary segmentation on the CUSUM inner product of two halves.

Explained in chapters/multilayer-changepoints/01_theory.md ("Seeded binary segmentation").
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..common import check_between, check_int, check_positive
from .cusum import cusum_inner, prefix_sums

__all__ = ["seeded_intervals", "candidate_splits", "default_threshold", "StageOne", "seeded_binary_segmentation", "split_halves",
           "features"]


def seeded_intervals(T, decay=np.sqrt(0.5), min_length=4) -> np.ndarray:
    """Seeded intervals (s, e] of Kovacs et al.: layer k has 2*ceil(decay^-(k-1)) - 1 evenly shifted intervals
    of length T * decay^(k-1); intervals shorter than `min_length` are dropped. Returns an (m, 2) int array.

    Explained in chapters/multilayer-changepoints/01_theory.md. decay = 1/2 gives the paper's Def. 3 (dyadic).
    """
    T = check_int("T", T, 2)
    check_between("decay", decay, 0, 1)
    min_length = check_int("min_length", min_length, 2)
    out = []
    k = 1
    while T * decay ** (k - 1) >= min_length:
        length = T * decay ** (k - 1)
        m = 2 * int(np.ceil(round(decay ** -(k - 1), 9))) - 1
        shift = (T - length) / (m - 1) if m > 1 else 0.0
        for i in range(m):
            s, e = int(np.floor(i * shift)), int(np.ceil(i * shift + length))
            out.append((s, min(e, T)))
        k += 1
    iv = np.unique(np.array(out, dtype=int), axis=0)
    return iv[iv[:, 1] - iv[:, 0] >= min_length]


def default_threshold(n, L, T, c_tau=0.1) -> float:
    """tau = c_tau * n * sqrt(L) * log(T)^(3/2), the paper's threshold (its R code uses log(T/2), the half's length).

    Explained in chapters/multilayer-changepoints/01_theory.md.
    """
    n, L, T = check_int("n", n, 1), check_int("L", L, 1), check_int("T", T, 2)
    return check_positive("c_tau", c_tau) * n * np.sqrt(L) * np.log(T) ** 1.5


def split_halves(A):
    """The two independent halves of a sequence: A_even = A(2), A(4), ... and B_odd = A(1), A(3), ...
    (times are 1-based, so A[1::2] and A[0::2]); both have length floor(T/2).

    Explained in chapters/multilayer-changepoints/01_theory.md.
    """
    A = np.asarray(A)
    h = A.shape[0] // 2
    return A[1::2][:h], A[0::2][:h]


def features(A, directed):
    """Flatten each network to its distinct entries: all n*n*L for directed, the upper triangle for undirected.

    Explained in chapters/multilayer-changepoints/01_theory.md.
    """
    A = np.asarray(A, dtype=float)
    if directed:
        return A.reshape(A.shape[0], -1)
    iu = np.triu_indices(A.shape[1])
    return A[:, iu[0], iu[1], :].reshape(A.shape[0], -1)


@dataclass(frozen=True)
class StageOne:
    """Stage I output on the half series (length T'): the seeded intervals, each one's best split b and its
    statistic a = |<A~(b), B~(b)>|, the threshold tau and the accepted change points (half-series times).

    Explained in chapters/multilayer-changepoints/01_theory.md.
    """

    intervals: np.ndarray
    best: np.ndarray
    stat: np.ndarray
    tau: float
    points: np.ndarray
    gram: np.ndarray


def candidate_splits(s, e, trim_frac=1 / 64) -> np.ndarray:
    """The split points scanned on the interval (s, e]: t with at least trim + 1 observations on each side, where
    trim = max(1, ceil((e - s) * trim_frac)); a split at t puts s+1..t on the left and t+1..e on the right.

    Explained in chapters/multilayer-changepoints/01_theory.md. Without the extra observation a split could leave a
    single time point on one side, and on short intervals the statistic's maximum then sits at the edge.
    """
    trim = max(1, int(np.ceil((e - s) * trim_frac)))
    return np.arange(s + trim + 1, e - trim)


def _interval_scan(G, intervals, trim_frac):
    s_all, e_all, t_all, owner = [], [], [], []
    for j, (s, e) in enumerate(intervals):
        t = candidate_splits(s, e, trim_frac)
        s_all.append(np.full(t.size, s)), e_all.append(np.full(t.size, e)), t_all.append(t)
        owner.append(np.full(t.size, j))
    s_all, e_all, t_all, owner = map(np.concatenate, (s_all, e_all, t_all, owner))
    val = np.abs(cusum_inner(G, s_all, e_all, t_all))
    best = np.zeros(len(intervals), dtype=int)
    stat = np.full(len(intervals), -np.inf)
    order = np.lexsort((-val, owner))                  # per interval, largest value first
    first = np.r_[True, owner[order][1:] != owner[order][:-1]]
    pick = order[first]
    best[owner[pick]], stat[owner[pick]] = t_all[pick], val[pick]
    return best, stat


def seeded_binary_segmentation(A_half, B_half, tau, directed=True, decay=np.sqrt(0.5), min_length=4,
                               trim_frac=1 / 64) -> StageOne:
    """Stage I: on each seeded interval take b = argmax_t |<A~(t), B~(t)>|; accept candidates greedily, largest
    statistic first, if it exceeds `tau` and no accepted point lies inside the candidate's interval.

    Explained in chapters/multilayer-changepoints/01_theory.md. Inputs are the two halves (T', n, n, L).
    """
    if np.shape(A_half) != np.shape(B_half):
        raise ValueError("A_half and B_half must have the same shape")
    Tp = np.shape(A_half)[0]
    SA, SB = prefix_sums(features(A_half, directed)), prefix_sums(features(B_half, directed))
    G = SA @ SB.T                                       # (T'+1, T'+1) Gram of prefix sums: all we need
    iv = seeded_intervals(Tp, decay, min_length)
    best, stat = _interval_scan(G, iv, trim_frac)
    accepted = []
    for j in np.argsort(-stat, kind="stable"):
        if stat[j] <= tau:
            break
        s, e = iv[j]
        if not any(s < p <= e for p in accepted):
            accepted.append(int(best[j]))
    return StageOne(intervals=iv, best=best, stat=stat, tau=float(tau), points=np.array(sorted(accepted), dtype=int),
                    gram=G)
