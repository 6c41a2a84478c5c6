"""The CUSUM statistic of a sequence of tensors, and its inner product on two independent halves.

Explained in chapters/multilayer-changepoints/01_theory.md ("The CUSUM statistic").

For an interval (s, e] and a split s < t < e, the CUSUM of Y(s+1..e) is
    Y~^{s,e}(t) = sqrt((e-t)/((e-s)(t-s))) sum_{u=s+1}^{t} Y(u) - sqrt((t-s)/((e-s)(e-t))) sum_{u=t+1}^{e} Y(u).
Everything here goes through prefix sums S(t) = Y(1) + ... + Y(t): a sum over (a, b] is S(b) - S(a), and
the inner product of two CUSUMs needs only the Gram matrix G[i, j] = <S_A(i), S_B(j)> (one matrix product).
"""
from __future__ import annotations

import numpy as np

__all__ = ["cusum_weights", "cusum", "prefix_sums", "cusum_inner", "scalar_cusum"]


def cusum_weights(s, e, t) -> np.ndarray:
    """The weights omega^t_{s,e}(u), u = s+1..e (Def. 4 of the paper, as in its R code).

    Explained in chapters/multilayer-changepoints/01_theory.md.
    """
    s, e, t = int(s), int(e), int(t)
    if not s < t < e:
        raise ValueError(f"need s < t < e, got s={s}, t={t}, e={e}")
    u = np.arange(s + 1, e + 1)
    return np.where(u <= t, np.sqrt((e - t) / ((e - s) * (t - s))), -np.sqrt((t - s) / ((e - s) * (e - t))))


def cusum(Y, s, e, t) -> np.ndarray:
    """The CUSUM Y~^{s,e}(t) of a sequence Y (time first, 1-based times: Y[0] is time 1), by its definition.

    Explained in chapters/multilayer-changepoints/01_theory.md. A slow reference for `cusum_inner`.
    """
    Y = np.asarray(Y, dtype=float)
    if not 0 <= s < e <= Y.shape[0]:
        raise ValueError(f"need 0 <= s < e <= T={Y.shape[0]}, got s={s}, e={e}")
    return np.tensordot(cusum_weights(s, e, t), Y[s:e], axes=(0, 0))


def prefix_sums(Y) -> np.ndarray:
    """S(t) = Y(1) + ... + Y(t) for t = 0..T (S(0) = 0), with the non-time axes flattened: shape (T+1, p).

    Explained in chapters/multilayer-changepoints/01_theory.md. The sums are accumulated one time step at a time,
    S(t) = S(t-1) + Y(t), which is exactly what ``np.cumsum(flat, axis=0)`` computes (the same additions in the same
    order, so the same bits), but row by row: a cumulative sum down the columns of a wide (T, p) array strides
    through memory and is several times slower.
    """
    Y = np.asarray(Y, dtype=float)
    if Y.ndim < 1 or Y.shape[0] < 1:
        raise ValueError("Y must have a time axis first")
    flat = Y.reshape(Y.shape[0], -1)
    S = np.empty((flat.shape[0] + 1, flat.shape[1]))
    S[0] = 0.0
    for t in range(flat.shape[0]):
        np.add(S[t], flat[t], out=S[t + 1])
    return S


def cusum_inner(G, s, e, t) -> np.ndarray:
    """<A~^{s,e}(t), B~^{s,e}(t)> for arrays of (s, e, t), from the prefix-sum Gram G[i, j] = <S_A(i), S_B(j)>.

    Explained in chapters/multilayer-changepoints/01_theory.md. Vectorised: s, e, t broadcast together.
    """
    s, e, t = (np.asarray(v, dtype=int) for v in (s, e, t))
    if np.any(s >= t) or np.any(t >= e) or np.any(s < 0) or np.any(e >= G.shape[0]):
        raise ValueError("need 0 <= s < t < e <= T for every triple")
    a = np.sqrt((e - t) / ((e - s) * (t - s)))
    b = np.sqrt((t - s) / ((e - s) * (e - t)))

    def g(i1, i2, j1, j2):                            # <S_A(i2) - S_A(i1), S_B(j2) - S_B(j1)>
        return G[i2, j2] - G[i2, j1] - G[i1, j2] + G[i1, j1]

    return a * a * g(s, t, s, t) - a * b * (g(s, t, t, e) + g(t, e, s, t)) + b * b * g(t, e, t, e)


def scalar_cusum(c, s, e) -> np.ndarray:
    """CUSUM of a scalar series c(1..T) over (s, e] at every t = s+1..e-1, from its prefix sums.

    Explained in chapters/multilayer-changepoints/01_theory.md (the refined scan).
    """
    c = np.asarray(c, dtype=float)
    if not 0 <= s < e - 1 < c.size:
        raise ValueError(f"need 0 <= s < e - 1 and e <= T={c.size}, got s={s}, e={e}")
    S = np.concatenate([[0.0], np.cumsum(c)])
    t = np.arange(s + 1, e)
    a = np.sqrt((e - t) / ((e - s) * (t - s)))
    b = np.sqrt((t - s) / ((e - s) * (e - t)))
    return a * (S[t] - S[s]) - b * (S[e] - S[t])
