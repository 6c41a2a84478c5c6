"""Data for the SpecGD chapter: an imbalanced Gaussian mixture with orthogonal class means.

Explained in chapters/specgd/01_theory.md.

Notation (the chapter's, reconstructed from the paper's abstract; see the chapter's index page):
K classes, dimension d, class priors pi_k (long-tailed), class means mu_k = mu * mu_hat_k with
orthonormal mu_hat_k, and inputs x = mu_y + sigma * z with z ~ N(0, I_d).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..common import check_int, check_positive

__all__ = ["GMMData", "long_tailed_priors", "class_counts", "make_gmm", "moments", "class_means"]


def long_tailed_priors(num_classes: int, imbalance_ratio: float) -> np.ndarray:
    """Exponentially decaying class priors pi_k = R^{-k/(K-1)} / Z, k = 0..K-1.

    Explained in chapters/specgd/01_theory.md. ``imbalance_ratio`` is R = pi_max / pi_min (R >= 1;
    R = 1 is the balanced case). The profile is the usual "long-tailed" one of CIFAR-LT.
    """
    K = check_int("num_classes", num_classes, 2)
    if not np.isfinite(imbalance_ratio) or imbalance_ratio < 1:
        raise ValueError(f"imbalance_ratio must be >= 1, got {imbalance_ratio!r}")
    p = float(imbalance_ratio) ** (-np.arange(K) / (K - 1))
    return p / p.sum()


def class_counts(n: int, priors) -> np.ndarray:
    """Deterministic class sizes n_k = max(1, round(n * pi_k)) of a training set of about n points.

    Explained in chapters/specgd/01_theory.md. Fixing the counts (instead of sampling them) keeps
    the imbalance exactly the one the priors say, so seeds differ only in the Gaussian noise.
    """
    n = check_int("n", n, 1)
    p = np.asarray(priors, dtype=float)
    if p.ndim != 1 or p.size < 2 or np.any(p <= 0) or not np.isclose(p.sum(), 1.0):
        raise ValueError("priors must be a 1-D vector of >= 2 positive numbers summing to 1")
    return np.maximum(1, np.round(n * p).astype(int))


@dataclass(frozen=True)
class GMMData:
    """A seeded draw of the imbalanced mixture: an imbalanced training set, balanced val and test sets.

    Explained in chapters/specgd/01_theory.md. ``means`` is the d x K matrix M = [mu_1 ... mu_K]
    (orthogonal columns of norm mu); ``priors`` the pi_k; ``counts`` the training class sizes n_k.
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    means: np.ndarray
    priors: np.ndarray
    counts: np.ndarray
    mu: float
    sigma: float

    @property
    def num_classes(self) -> int:
        return self.means.shape[1]

    @property
    def dim(self) -> int:
        return self.means.shape[0]


def _sample(rng, means, counts, sigma):
    y = np.repeat(np.arange(len(counts)), counts)
    X = means[:, y].T + sigma * rng.standard_normal((len(y), means.shape[0]))
    return X, y


def make_gmm(num_classes: int = 10, dim: int = 100, n_train: int = 10_000,
             imbalance_ratio: float = 100.0, mu: float = 3.0, sigma: float = 1.0,
             n_val_per_class: int = 300, n_test_per_class: int = 300, seed: int = 0) -> GMMData:
    """Draw the orthogonal Gaussian mixture x = mu_y + sigma z with long-tailed training priors.

    Explained in chapters/specgd/01_theory.md. The class means are mu times K random orthonormal
    vectors in R^d (so no coordinate is special); the training set has about ``n_train`` points with
    class sizes from :func:`class_counts`; validation and test sets are balanced (equal class sizes),
    so that plain accuracy per class averages to the balanced accuracy the paper studies.
    """
    K = check_int("num_classes", num_classes, 2)
    d = check_int("dim", dim, K)
    check_int("seed", seed, 0)
    nv = check_int("n_val_per_class", n_val_per_class, 1)
    nt = check_int("n_test_per_class", n_test_per_class, 1)
    mu, sigma = check_positive("mu", mu), check_positive("sigma", sigma)
    priors = long_tailed_priors(K, imbalance_ratio)
    counts = class_counts(n_train, priors)
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((d, K)))
    means = mu * q
    X_tr, y_tr = _sample(rng, means, counts, sigma)
    X_va, y_va = _sample(rng, means, np.full(K, nv), sigma)
    X_te, y_te = _sample(rng, means, np.full(K, nt), sigma)
    return GMMData(X_tr, y_tr, X_va, y_va, X_te, y_te, means, priors, counts, mu, sigma)


def _check_xy(X, y, num_classes):
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array (n, d), got shape {X.shape}")
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},), got {y.shape}")
    K = check_int("num_classes", num_classes, 2)
    if y.size and (y.min() < 0 or y.max() >= K):
        raise ValueError(f"y must hold labels in 0..{K - 1}")
    return X, y, K


def moments(X, y, num_classes: int):
    """Second moments of a training set: Sigma_hat = X^T X / n (d x d) and C_hat = Y^T X / n (K x d).

    Explained in chapters/specgd/01_theory.md. With squared loss L(W) = ||W X^T - Y^T||_F^2 / (2n),
    the gradient is W Sigma_hat - C_hat: the whole training set enters only through these two
    matrices, so training cost does not grow with n.
    """
    X, y, K = _check_xy(X, y, num_classes)
    n = X.shape[0]
    Y = np.eye(K)[y]
    return X.T @ X / n, Y.T @ X / n


def class_means(X, y, num_classes: int) -> np.ndarray:
    """The training set's class means x_bar_k as a d x K matrix (columns), the sample's mu_k.

    Explained in chapters/specgd/01_theory.md (the "plug-in" closed form).
    """
    X, y, K = _check_xy(X, y, num_classes)
    counts = np.bincount(y, minlength=K)
    if np.any(counts == 0):
        raise ValueError("y must contain every class at least once")
    return (np.eye(K)[y].T @ X / counts[:, None]).T
