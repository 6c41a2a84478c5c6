"""The maximum-entropy log-linear model, one feature at a time, against a reference sample q.

Explained in chapters/and-or-templates/01_theory.md. For a response r_j in [0, 1] with reference samples
r_j(q_1..q_M), p_j(r) = q_j(r) exp(beta_j r) / z_j(beta_j), z_j(beta) = E_q[exp(beta r_j)]. Fitting matches the
moment E_p[r_j] = rbar_j, a one-dimensional root (our reconstruction, after Si & Zhu's hybrid image templates).
The information gain beta_j rbar_j - log z_j is KL(p_j || q_j).
"""
from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

BETA_MAX = 20.0


def _as_reference(ref) -> np.ndarray:
    ref = np.asarray(ref, dtype=float)
    if ref.ndim == 1:
        ref = ref[:, None]
    if ref.ndim != 2 or ref.shape[0] < 2:
        raise ValueError(f"reference must be (M, D) samples with M >= 2, got shape {np.shape(ref)}")
    if np.any(ref < 0) or np.any(ref > 1):
        raise ValueError("reference responses must lie in [0, 1] (normalise the responses first)")
    return ref


def log_z(beta, ref) -> np.ndarray:
    """log z_j(beta_j) = log mean_m exp(beta_j r_mj), per feature (chapters/and-or-templates/01_theory.md)."""
    ref = _as_reference(ref)
    beta = np.broadcast_to(np.asarray(beta, dtype=float), (ref.shape[1],))
    return logsumexp(beta[None, :] * ref, axis=0) - np.log(ref.shape[0])


def tilted_mean(beta, ref) -> np.ndarray:
    """E_p[r_j] under p_j proportional to q_j exp(beta_j r), the derivative of log z_j
    (chapters/and-or-templates/01_theory.md)."""
    ref = _as_reference(ref)
    return _tilted_mean(np.broadcast_to(np.asarray(beta, dtype=float), (ref.shape[1],)), ref)


def _tilted_mean(beta, ref) -> np.ndarray:
    """`tilted_mean` without the checks, for a float beta (D,) and a reference already checked by `_as_reference`
    (fit_beta calls it at every bisection step on the same reference)."""
    a = beta[None, :] * ref
    w = np.exp(a - a.max(0, keepdims=True))
    return (w * ref).sum(0) / w.sum(0)


def fit_beta(rbar, ref, iters: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """beta_j solving E_p[r_j] = rbar_j by bisection on [-BETA_MAX, BETA_MAX] (E_p is increasing in beta), all
    features at once; returns (beta, log z). A target outside the reference's range ends at the bound
    (chapters/and-or-templates/01_theory.md)."""
    ref = _as_reference(ref)
    rbar = np.asarray(rbar, dtype=float).reshape(-1)
    if rbar.shape[0] != ref.shape[1]:
        raise ValueError(f"rbar has {rbar.shape[0]} features but the reference has {ref.shape[1]}")
    lo, hi = np.full_like(rbar, -BETA_MAX), np.full_like(rbar, BETA_MAX)
    for _ in range(iters):
        mid = (lo + hi) / 2
        above = _tilted_mean(mid, ref) > rbar
        hi, lo = np.where(above, mid, hi), np.where(above, lo, mid)
    beta = (lo + hi) / 2
    return beta, log_z(beta, ref)


def gain(rbar, beta, logz) -> np.ndarray:
    """Information gain per image, beta rbar - log z = KL(p || q) at the fitted beta
    (chapters/and-or-templates/01_theory.md)."""
    return np.asarray(beta) * np.asarray(rbar) - np.asarray(logz)


def kl_tilted(beta, ref) -> np.ndarray:
    """KL(p_beta || q) computed directly on the reference sample, sum_m w_m log(w_m M), for checking `gain`
    (chapters/and-or-templates/01_theory.md)."""
    ref = _as_reference(ref)
    beta = np.broadcast_to(np.asarray(beta, dtype=float), (ref.shape[1],))
    logw = beta[None, :] * ref - logsumexp(beta[None, :] * ref, axis=0, keepdims=True)
    return (np.exp(logw) * (logw + np.log(ref.shape[0]))).sum(0)
