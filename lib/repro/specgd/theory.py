"""Closed-form dynamics of GD and SpecGD on the orthogonal Gaussian mixture, and balanced accuracy.

Explained in chapters/specgd/01_theory.md. Notation: priors pi_k, mean norm mu, noise sigma,
lambda_k = pi_k mu^2 + sigma^2 (the population second moment along mu_hat_k), a*_k = pi_k mu /
lambda_k (the least-squares coefficient), and a_k(t) = e_k^T W_t mu_hat_k (how much of class k's
direction the linear model W has learned after t steps).
"""
from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from ..common import check_int
from .data import long_tailed_priors

__all__ = ["gmm_constants", "gd_closed_form", "spec_closed_form", "components",
           "plug_in_constants", "population_moments", "prior_sweep", "balanced_accuracy_closed_form"]


def _check_priors(priors) -> np.ndarray:
    p = np.asarray(priors, dtype=float)
    if p.ndim != 1 or p.size < 2 or np.any(p <= 0):
        raise ValueError(f"priors must be a 1-D vector of >= 2 positive numbers, got shape {p.shape}")
    return p


def _check_scalar(name, value, positive=True) -> np.ndarray:
    v = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(v)) or (positive and np.any(v <= 0)):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return v


def gmm_constants(priors, mu, sigma):
    """(lambda_k, a*_k): the rate and the end point of class k's component.

    Explained in chapters/specgd/01_theory.md. ``mu`` may be a scalar or one norm per class (the
    plug-in version uses the sample's class-mean norms).
    """
    p = _check_priors(priors)
    mu = _check_scalar("mu", mu)
    sigma = _check_scalar("sigma", sigma)
    lam = p * mu ** 2 + sigma ** 2
    return lam, p * mu / lam


def _check_steps_eta(t, eta):
    t = np.asarray(t, dtype=float)
    if t.ndim != 1 or np.any(t < 0):
        raise ValueError("t must be a 1-D array of non-negative step counts")
    return t, float(_check_scalar("eta", eta))


def gd_closed_form(t, eta, priors, mu, sigma) -> np.ndarray:
    """a_k(t) = a*_k (1 - (1 - eta lambda_k)^t) for GD from W_0 = 0; returns shape (len(t), K).

    Explained in chapters/specgd/01_theory.md. Class k is learned at rate eta lambda_k, so
    frequent classes (large pi_k, large lambda_k) are learned first.
    """
    t, eta = _check_steps_eta(t, eta)
    lam, a_star = gmm_constants(priors, mu, sigma)
    return a_star * (1.0 - (1.0 - eta * lam) ** t[:, None])


def spec_closed_form(t, eta, priors, mu, sigma) -> np.ndarray:
    """a_k(t) = min(eta t, a*_k) for SpecGD from W_0 = 0; shape (len(t), K).

    Explained in chapters/specgd/01_theory.md. Every unsaturated component gains exactly eta per
    step; once a_k reaches a*_k it oscillates within eta of it (the min ignores that oscillation).
    """
    t, eta = _check_steps_eta(t, eta)
    _, a_star = gmm_constants(priors, mu, sigma)
    return np.minimum(eta * t[:, None], a_star)


def population_moments(priors, means, sigma):
    """The population versions of Sigma_hat and C_hat: Sigma = sigma^2 I + sum_k pi_k m_k m_k^T, C = sum_k pi_k e_k m_k^T.

    Explained in chapters/specgd/01_theory.md (other class priors). ``means`` is (d, K) with one class mean per
    column; with these moments the closed forms are exact, for any priors.
    """
    p = _check_priors(priors)
    means = np.asarray(means, dtype=float)
    if means.ndim != 2 or means.shape[1] != p.size:
        raise ValueError(f"means must be (d, K) with K = len(priors) = {p.size}, got shape {means.shape}")
    sigma = float(_check_scalar("sigma", sigma))
    d = means.shape[0]
    return sigma ** 2 * np.eye(d) + (means * p) @ means.T, p[:, None] * means.T


def prior_sweep(num_classes: int = 10, seed: int = 0) -> dict:
    """Named class-prior vectors for testing the closed forms beyond one profile: balanced, long-tailed with
    R = 10, 100 and 1000, a step profile (half the classes 100 times rarer) and three Dirichlet(1) draws.

    Explained in chapters/specgd/01_theory.md (other class priors).
    """
    K = check_int("num_classes", num_classes, 2)
    sweep = {f"long-tailed, R = {R:g}": long_tailed_priors(K, R) for R in (1, 10, 100, 1000)}
    step = np.where(np.arange(K) < K // 2, 1.0, 0.01)
    sweep["step, 100x"] = step / step.sum()
    rng = np.random.default_rng(seed)
    for i in range(3):
        sweep[f"Dirichlet(1) draw {i + 1}"] = rng.dirichlet(np.ones(K))
    return sweep


def components(W, directions) -> np.ndarray:
    """a_k = e_k^T W u_k for each class k: W (..., K, d), directions (d, K) with unit columns u_k.

    Explained in chapters/specgd/01_theory.md. With ``directions`` = the true mean directions
    mu_hat_k this is the theory's a_k; with the sample's class-mean directions it is the plug-in one.
    """
    W = np.asarray(W, dtype=float)
    U = np.asarray(directions, dtype=float)
    if W.ndim < 2 or U.ndim != 2 or W.shape[-2:] != (U.shape[1], U.shape[0]):
        raise ValueError(f"W must be (..., K, d) and directions (d, K); got {W.shape} and {U.shape}")
    return np.einsum("...kd,dk->...k", W, U)


def plug_in_constants(X, y, num_classes):
    """The training set's own (pi_hat_k, m_k, u_k): class frequencies, class-mean norms and directions.

    Explained in chapters/specgd/01_theory.md. Feeding these into :func:`gd_closed_form` applies
    the derivation to the sample itself, which removes the sampling error of the class means.
    """
    from .data import class_means
    means = class_means(X, y, num_classes)
    counts = np.bincount(np.asarray(y), minlength=num_classes)
    norms = np.linalg.norm(means, axis=0)
    return counts / counts.sum(), norms, means / norms


def balanced_accuracy_closed_form(a, mu, sigma, n_grid: int = 401) -> np.ndarray:
    """Balanced accuracy of W = sum_k a_k e_k mu_hat_k^T on the balanced mixture.

    Explained in chapters/specgd/01_theory.md. A point of class k is scored a_j (mu [j = k] +
    sigma u_j) with u_j iid N(0, 1), so acc_k = int phi(u) prod_{j != k} Phi(a_k (mu + sigma u) /
    (a_j sigma)) du, and the balanced accuracy is their mean. ``a`` has shape (..., K), entries > 0.
    """
    a = np.asarray(a, dtype=float)
    if a.ndim < 1 or a.shape[-1] < 2 or np.any(a <= 0):
        raise ValueError("a must have shape (..., K) with K >= 2 and positive entries")
    mu, sigma = float(_check_scalar("mu", mu)), float(_check_scalar("sigma", sigma))
    u = np.linspace(-8.0, 8.0, n_grid)
    w = np.exp(-u ** 2 / 2) / np.sqrt(2 * np.pi) * (u[1] - u[0])
    K = a.shape[-1]
    acc = np.zeros(a.shape[:-1])
    for k in range(K):                                     # one class at a time keeps memory small
        others = np.delete(a, k, axis=-1)                  # (..., K-1)
        ratio = (a[..., k, None, None] / others[..., None]) * (mu + sigma * u) / sigma   # (..., K-1, grid)
        log_prob = np.log(np.clip(ndtr(ratio), 1e-300, None)).sum(axis=-2)
        acc += (np.exp(log_prob) * w).sum(axis=-1)
    return acc / K
