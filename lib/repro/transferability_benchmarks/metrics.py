"""Transferability (SITE) metrics: a score of a model's features for a target task, without fine-tuning.

Explained in chapters/transferability-benchmarks/01_theory.md. Every metric takes the target features ``F`` (n, D)
and labels ``y`` (n,) with classes 0..C-1; LEEP and NCE take the model's source-task softmax ``P`` (n, Z) instead
of (or beside) features. Higher is better for all of them.
"""
from __future__ import annotations

import warnings

import numpy as np

from repro.common import check_2d, check_int

__all__ = ["logme", "logme_evidence", "hscore", "leep", "nleep", "nce", "transrate", "gbc", "knn_accuracy",
           "probe_subset_accuracy", "METRICS"]


def _check_labels(F, y, name="F"):
    F = check_2d(name, F) if not isinstance(F, np.ndarray) or F.ndim != 2 else F
    y = np.asarray(y)
    if y.ndim != 1 or len(y) != len(F):
        raise ValueError(f"y must be a 1-d array of {len(F)} labels, got shape {y.shape}")
    if y.dtype.kind not in "iu" or y.min() < 0:
        raise ValueError("y must hold non-negative integer class labels")
    if len(np.unique(y)) < 2:
        raise ValueError("y must hold at least two classes")
    return np.asarray(F, dtype=np.float64), y


def logme_evidence(F, t, alpha: float, beta: float) -> float:
    """The log evidence of Bayesian linear regression of one target column ``t`` on ``F``, divided by n, computed
    directly (inverse and determinant of A = alpha I + beta F^T F), at given ``alpha`` and ``beta``.

    Explained in chapters/transferability-benchmarks/01_theory.md; the reference for ``logme``'s fast version.
    """
    F = np.asarray(F, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    if F.ndim != 2 or t.shape != (len(F),):
        raise ValueError(f"F must be 2-d and t a vector of its {len(F)} rows")
    if not (alpha > 0 and beta > 0):
        raise ValueError(f"alpha and beta must be positive, got alpha={alpha!r}, beta={beta!r}")
    n, D = F.shape
    A = alpha * np.eye(D) + beta * F.T @ F
    m = beta * np.linalg.solve(A, F.T @ t)
    _, logdet = np.linalg.slogdet(A)
    ev = (n / 2 * np.log(beta) + D / 2 * np.log(alpha) - n / 2 * np.log(2 * np.pi)
          - beta / 2 * np.sum((F @ m - t) ** 2) - alpha / 2 * m @ m - logdet / 2)
    return float(ev / n)


def logme(F, y, max_iter: int = 100, tol: float = 1e-8, return_params: bool = False):
    """LogME (You et al. 2021): the evidence of Bayesian linear regression of each one-hot class column on ``F``,
    maximised over alpha and beta by the fixed-point iteration on the SVD of F, averaged over classes, over n.

    Explained in chapters/transferability-benchmarks/01_theory.md. With ``return_params`` also the list of
    (alpha, beta) per class.
    """
    F, y = _check_labels(F, y)
    max_iter = check_int("max_iter", max_iter)
    n, D = F.shape
    u, s, _ = np.linalg.svd(F, full_matrices=False)
    sigma = s ** 2                                       # eigenvalues of F^T F (the non-zero ones)
    T = (y[:, None] == np.arange(int(y.max()) + 1)[None, :]).astype(np.float64)   # one-hot columns
    z2 = (u.T @ T) ** 2                                  # (r, C): each column in the singular basis, squared
    rest = np.maximum(np.sum(T * T, 0) - z2.sum(0), 0.0)  # the part of each column outside F's column space
    sig = sigma[:, None]
    alpha, beta = np.ones(T.shape[1]), np.ones(T.shape[1])
    for _ in range(max_iter):                            # all classes at once
        den = alpha + beta * sig
        gamma = np.sum(beta * sig / den, 0)              # effective number of parameters
        m2 = np.sum(beta ** 2 * sig * z2 / den ** 2, 0)  # |m|^2
        res = np.sum(alpha ** 2 * z2 / den ** 2, 0) + rest   # |F m - t|^2
        a_new, b_new = gamma / np.maximum(m2, 1e-12), (n - gamma) / np.maximum(res, 1e-12)
        done = np.all(np.abs(a_new - alpha) / alpha < tol) and np.all(np.abs(b_new - beta) / beta < tol)
        alpha, beta = a_new, b_new
        if done:
            break
    den = alpha + beta * sig
    m2 = np.sum(beta ** 2 * sig * z2 / den ** 2, 0)
    res = np.sum(alpha ** 2 * z2 / den ** 2, 0) + rest
    logdet = np.sum(np.log(den), 0) + (D - len(sigma)) * np.log(alpha)
    out = (n / 2 * np.log(beta) + D / 2 * np.log(alpha) - n / 2 * np.log(2 * np.pi)
           - beta / 2 * res - alpha / 2 * m2 - logdet / 2) / n
    params = [(float(a_), float(b_)) for a_, b_ in zip(alpha, beta)]
    score = float(np.mean(out))
    return (score, params) if return_params else score


def hscore(F, y, ridge: float = 1e-6) -> float:
    """H-score (Bao et al. 2019): tr(cov(f)^-1 cov(E[f | y])), with a small ridge on cov(f).

    Explained in chapters/transferability-benchmarks/01_theory.md.
    """
    F, y = _check_labels(F, y)
    F = F - F.mean(0)
    cov = F.T @ F / len(F) + ridge * np.eye(F.shape[1])
    means = np.zeros_like(F)
    for c in np.unique(y):
        means[y == c] = F[y == c].mean(0)
    cov_between = means.T @ means / len(F)
    return float(np.trace(np.linalg.solve(cov, cov_between)))


def _leep_from_posterior(P, y) -> float:
    P = np.asarray(P, dtype=np.float64)
    C = int(y.max()) + 1
    joint = np.zeros((C, P.shape[1]))
    np.add.at(joint, y, P)
    joint /= len(y)                                      # empirical P(y, z)
    cond = joint / np.maximum(joint.sum(0, keepdims=True), 1e-12)     # P(y | z)
    return float(np.mean(np.log(np.maximum(np.sum(P * cond[y], axis=1), 1e-12))))


def leep(P, y) -> float:
    """LEEP (Nguyen et al. 2020): mean log of sum_z P(y_i | z) theta(x_i)_z, with theta the source softmax ``P``.

    Explained in chapters/transferability-benchmarks/01_theory.md.
    """
    P, y = _check_labels(P, y, "P")
    if P.min() < -1e-9 or not np.allclose(P.sum(1), 1, atol=1e-5):
        raise ValueError("P must hold probability rows (non-negative, summing to 1)")
    return _leep_from_posterior(P, y)


def nleep(F, y, n_components: int | None = None, pca_dim: int = 8, seed: int = 0) -> float:
    """NLEEP (Li et al. 2021): LEEP with the source softmax replaced by the posterior of a Gaussian mixture
    (scikit-learn, diagonal covariances) fitted to PCA-reduced features; ``n_components`` defaults to 2 per class.

    Explained in chapters/transferability-benchmarks/01_theory.md.
    """
    from sklearn.decomposition import PCA
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.mixture import GaussianMixture

    F, y = _check_labels(F, y)
    C = int(y.max()) + 1
    k = check_int("n_components", n_components) if n_components is not None else 2 * C
    Z = PCA(n_components=min(pca_dim, F.shape[1], len(F) - 1), random_state=seed).fit_transform(F)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        gmm = GaussianMixture(k, covariance_type="diag", random_state=seed, max_iter=30, reg_covar=1e-4).fit(Z)
    return _leep_from_posterior(gmm.predict_proba(Z), y)


def nce(P, y) -> float:
    """NCE (Tran et al. 2019): -H(Y | Z), with Z the source label the model predicts (argmax of ``P``).

    Explained in chapters/transferability-benchmarks/01_theory.md.
    """
    P, y = _check_labels(P, y, "P")
    z = P.argmax(1)
    joint = np.zeros((int(y.max()) + 1, P.shape[1]))
    np.add.at(joint, (y, z), 1.0)
    joint /= len(y)
    pz = joint.sum(0)
    nz = joint > 0
    return float(np.sum(joint[nz] * np.log((joint / np.maximum(pz, 1e-12))[nz])))


def _coding_rate(Z, eps):
    n, d = Z.shape
    return 0.5 * np.linalg.slogdet(np.eye(d) + d / (n * eps ** 2) * Z.T @ Z)[1]


def transrate(F, y, eps: float = 1e-1) -> float:
    """TransRate (Huang et al. 2022): R(Z, eps) - sum_c n_c/n R(Z_c, eps), the coding rate of the centred,
    unit-norm features minus the class-conditional ones, R = 1/2 log det(I + d/(n eps^2) Z^T Z).

    Explained in chapters/transferability-benchmarks/01_theory.md.
    """
    F, y = _check_labels(F, y)
    Z = F - F.mean(0)
    Z = Z / np.maximum(np.linalg.norm(Z, axis=1, keepdims=True), 1e-12)
    rate = _coding_rate(Z, eps)
    return float(rate - sum(np.mean(y == c) * _coding_rate(Z[y == c], eps) for c in np.unique(y)))


def gbc(F, y, pca_dim: int = 16) -> float:
    """GBC (Pandy et al. 2022): minus the sum over class pairs of the Bhattacharyya coefficient of per-class
    diagonal Gaussians in PCA space (higher: classes overlap less).

    Explained in chapters/transferability-benchmarks/01_theory.md.
    """
    from sklearn.decomposition import PCA

    F, y = _check_labels(F, y)
    Z = PCA(n_components=min(pca_dim, F.shape[1], len(F) - 1), random_state=0).fit_transform(F)
    classes = np.unique(y)
    mu = np.stack([Z[y == c].mean(0) for c in classes])
    var = np.stack([Z[y == c].var(0) + 1e-6 for c in classes])
    v = (var[:, None] + var[None, :]) / 2                # (C, C, d)
    db = (0.125 * np.sum((mu[:, None] - mu[None, :]) ** 2 / v, -1)
          + 0.5 * np.sum(np.log(v) - 0.5 * (np.log(var)[:, None] + np.log(var)[None, :]), -1))
    bc = np.exp(-db)
    total = bc.sum() - np.trace(bc)
    return float(-total)


def knn_accuracy(F, y, k: int = 5, seed: int = 0) -> float:
    """A cheap peer estimator: 3-fold cross-validated k-nearest-neighbour accuracy on standardised features
    (scikit-learn).

    Explained in chapters/transferability-benchmarks/02_experiments.md. The folds are those of
    ``cross_val_score(KNeighborsClassifier(k), Z, y, cv=3)`` (stratified, unshuffled) and the result is the mean of
    the three test accuracies, as that call gives; the loop is written out because ``cross_val_score``'s machinery
    costs more than the three small fits.
    """
    from sklearn.model_selection import StratifiedKFold
    from sklearn.neighbors import KNeighborsClassifier

    F, y = _check_labels(F, y)
    k = check_int("k", k)
    Z = (F - F.mean(0)) / (F.std(0) + 1e-6)
    scores = [KNeighborsClassifier(k).fit(Z[tr], y[tr]).score(Z[te], y[te])
              for tr, te in StratifiedKFold(n_splits=3).split(Z, y)]
    return float(np.mean(scores))


def probe_subset_accuracy(F, y, fraction: float = 0.2, seed: int = 0) -> float:
    """A cheap peer estimator: a logistic-regression probe trained on a ``fraction`` of the target training data,
    scored on the rest (scikit-learn).

    Explained in chapters/transferability-benchmarks/02_experiments.md.
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    F, y = _check_labels(F, y)
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be in (0, 1), got {fraction!r}")
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(y))
    cut = max(int(fraction * len(y)), 2 * (int(y.max()) + 1))
    Z = (F - F.mean(0)) / (F.std(0) + 1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = LogisticRegression(max_iter=100, C=0.5).fit(Z[idx[:cut]], y[idx[:cut]])
    return float(clf.score(Z[idx[cut:]], y[idx[cut:]]))


#: The seven SITE metrics, by name: (function, needs the source softmax instead of features).
METRICS = {"LogME": (logme, False), "H-score": (hscore, False), "LEEP": (leep, True), "NLEEP": (nleep, False),
           "NCE": (nce, True), "TransRate": (transrate, False), "GBC": (gbc, False)}
