"""Reconstruction metrics: PixCorr, SSIM, two-way identification and the class accuracy of a held-out classifier.

Explained in chapters/neuroadapter/02_experiments.md. Images are (n, 16, 16) in [-1, 1]. SSIM is the standard one
(Wang et al., 2004) with a Gaussian window (sd 1.5, 7×7, valid positions only) on images mapped to [0, 1], written
here because scikit-image is not in the book's environment.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..common.checks import check_int

__all__ = ["pixcorr", "ssim", "two_way_identification", "HeldOutClassifier"]


def _pair(a, b) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 3:
        raise ValueError(f"recon and truth must be image stacks (n, h, w) of one shape; got {a.shape} and {b.shape}")
    return a, b


def pixcorr(recon, truth) -> np.ndarray:
    """Pearson correlation of each reconstruction with its image over pixels (n,).

    Explained in chapters/neuroadapter/02_experiments.md.
    """
    a, b = _pair(recon, truth)
    a = a.reshape(len(a), -1) - a.reshape(len(a), -1).mean(1, keepdims=True)
    b = b.reshape(len(b), -1) - b.reshape(len(b), -1).mean(1, keepdims=True)
    return (a * b).sum(1) / np.sqrt((a ** 2).sum(1) * (b ** 2).sum(1) + 1e-12)


def _blur(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    from numpy.lib.stride_tricks import sliding_window_view

    return (sliding_window_view(x, w.shape, axis=(1, 2)) * w).sum((-1, -2))


def ssim(recon, truth, window: int = 7, sd: float = 1.5) -> np.ndarray:
    """Structural similarity of each reconstruction with its image (n,), on [0, 1] intensities.

    Explained in chapters/neuroadapter/02_experiments.md.
    """
    a, b = _pair(recon, truth)
    window = check_int("window", window, low=3)
    a, b = (a + 1) / 2, (b + 1) / 2
    r = np.arange(window) - (window - 1) / 2
    g = np.exp(-r ** 2 / (2 * sd ** 2))
    w = np.outer(g, g) / np.outer(g, g).sum()
    c1, c2 = 0.01 ** 2, 0.03 ** 2
    ma, mb = _blur(a, w), _blur(b, w)
    va, vb, cab = _blur(a * a, w) - ma ** 2, _blur(b * b, w) - mb ** 2, _blur(a * b, w) - ma * mb
    s = ((2 * ma * mb + c1) * (2 * cab + c2)) / ((ma ** 2 + mb ** 2 + c1) * (va + vb + c2))
    return s.mean((1, 2))


def two_way_identification(feat_recon, feat_truth) -> float:
    """Two-way identification: the fraction of pairs (i, j ≠ i) where reconstruction i's features correlate more
    with image i's than with image j's. Chance is 0.5. Explained in chapters/neuroadapter/02_experiments.md.
    """
    a, b = np.asarray(feat_recon, dtype=np.float64), np.asarray(feat_truth, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 2 or len(a) < 2:
        raise ValueError(f"feat_recon and feat_truth must be (n >= 2, d) of one shape; got {a.shape} and {b.shape}")
    za = (a - a.mean(1, keepdims=True)) / (a.std(1, keepdims=True) + 1e-12)
    zb = (b - b.mean(1, keepdims=True)) / (b.std(1, keepdims=True) + 1e-12)
    c = za @ zb.T / a.shape[1]
    right = np.diag(c)[:, None] > c
    return float((right.sum() ) / (len(a) * (len(a) - 1)))


class HeldOutClassifier:
    """A digit classifier (scikit-learn MLP, one hidden layer) trained on the training images only; it scores
    reconstructions (class accuracy) and gives the features of two-way identification (its hidden layer).

    Explained in chapters/neuroadapter/02_experiments.md.
    """

    def __init__(self, images, labels, hidden: int = 128, seed: int = 0, max_iter: int = 60):
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.neural_network import MLPClassifier

        x = np.asarray(images, dtype=np.float64)
        if x.ndim != 3 or len(x) != len(labels):
            raise ValueError(f"images must be (n, h, w) with one label each; got {x.shape} and {len(labels)} labels")
        self.net = MLPClassifier((check_int("hidden", hidden),), max_iter=check_int("max_iter", max_iter),
                                 random_state=check_int("seed", seed, low=0))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.net.fit(x.reshape(len(x), -1), np.asarray(labels))

    def predict(self, images) -> np.ndarray:
        """Predicted classes (n,). Explained in chapters/neuroadapter/02_experiments.md."""
        x = np.asarray(images, dtype=np.float64)
        return self.net.predict(x.reshape(len(x), -1))

    def accuracy(self, images, labels) -> float:
        """Fraction of ``images`` classified as ``labels``. Explained in chapters/neuroadapter/02_experiments.md."""
        return float((self.predict(images) == np.asarray(labels)).mean())

    def features(self, images) -> np.ndarray:
        """The hidden layer's activations (n, hidden). Explained in chapters/neuroadapter/02_experiments.md."""
        x = np.asarray(images, dtype=np.float64)
        h = x.reshape(len(x), -1) @ self.net.coefs_[0] + self.net.intercepts_[0]
        return np.maximum(h, 0)
