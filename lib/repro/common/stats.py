"""Spread over seeds and confidence intervals: one convention for the whole book.

Explained in chapters/appendix/reproducibility.md. The convention:

- the spread of a number over seeds (or runs) is the **sample standard deviation**, ``ddof=1``
  (:func:`sample_sd`, :func:`mean_and_sd`); "± sd" in a table means this;
- the uncertainty of a mean over seeds is its **standard error** sd / sqrt(n) (:func:`standard_error`), or
- a **95% percentile-bootstrap interval of the mean** over seeds (:func:`bootstrap_ci`, ``scipy.stats.bootstrap``
  with ``method="percentile"``, 2000 resamples, a seeded generator), the book's confidence interval;
- where items are grouped (test images drawn per seed, answers per question), a **two-stage cluster bootstrap**
  (:func:`cluster_bootstrap_ci`): resample the groups, then the items within each drawn group.
"""
from __future__ import annotations

import warnings

import numpy as np

from .checks import check_between, check_int

__all__ = ["sample_sd", "standard_error", "mean_and_sd", "bootstrap_ci", "cluster_bootstrap_ci"]


def _values(values, axis: int) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    if x.ndim == 0 or x.shape[axis] < 2:
        raise ValueError(f"values must hold at least 2 seeds along axis {axis}, got shape {x.shape}")
    return x


def sample_sd(values, axis: int = 0):
    """The sample standard deviation (ddof=1) over seeds along ``axis``: the book's "± sd".

    Explained in chapters/appendix/reproducibility.md.
    """
    x = _values(values, axis)
    sd = x.std(axis=axis, ddof=1)
    return float(sd) if np.ndim(sd) == 0 else sd


def standard_error(values, axis: int = 0):
    """The standard error of the mean over seeds along ``axis``: sample sd (ddof=1) / sqrt(n).

    Explained in chapters/appendix/reproducibility.md.
    """
    x = _values(values, axis)
    return sample_sd(x, axis) / np.sqrt(x.shape[axis])


def mean_and_sd(values, axis: int = 0) -> tuple:
    """(mean, sample sd with ddof=1) over seeds along ``axis``.

    Explained in chapters/appendix/reproducibility.md.
    """
    x = _values(values, axis)
    mean = x.mean(axis=axis)
    return (float(mean) if np.ndim(mean) == 0 else mean), sample_sd(x, axis)


def bootstrap_ci(samples, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0, axis: int = 0):
    """(mean, low, high) of the mean over ``axis`` (runs, seeds), with a percentile bootstrap interval.

    Explained in chapters/scorer/02_experiments.md. Works on a vector of per-run numbers or, along ``axis``, on
    per-run curves (then each of the three is an array).
    """
    from scipy import stats

    x = np.asarray(samples, dtype=float)
    check_between("confidence", confidence, 0, 1)
    check_int("n_resamples", n_resamples)
    if x.shape[axis] < 2:
        raise ValueError(f"need at least 2 runs along axis {axis} for a bootstrap, got {x.shape[axis]}")
    mean = x.mean(axis=axis)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # degenerate resamples (all runs equal) warn; the CI is a point
        res = stats.bootstrap((x,), np.mean, axis=axis, vectorized=True, confidence_level=confidence,
                              n_resamples=n_resamples, method="percentile", rng=np.random.default_rng(seed))
    lo, hi = res.confidence_interval
    return tuple(np.asarray(v) if np.ndim(v) else float(v) for v in (mean, lo, hi))


def cluster_bootstrap_ci(values, clusters, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0) -> tuple:
    """(mean, low, high) of the mean of the items `values`, with a percentile interval from a two-stage bootstrap:
    each resample draws the clusters (`clusters[i]` names item i's group: its seed, its question) with replacement,
    then the items within each drawn cluster. With a single cluster it is the bootstrap over items.

    Explained in chapters/appendix/reproducibility.md (used first in chapters/multimodal-sae/02_experiments.md).
    """
    x, groups = np.asarray(values, dtype=float), np.asarray(clusters)
    check_between("confidence", confidence, 0, 1)
    check_int("n_resamples", n_resamples)
    if x.ndim != 1 or groups.shape != x.shape:
        raise ValueError(f"values and clusters must be 1-D and of one length, got shapes {x.shape} and {groups.shape}")
    if len(x) < 2:
        raise ValueError(f"need at least 2 items for a bootstrap, got {len(x)}")
    members = [x[groups == g] for g in np.unique(groups)]
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    for b in range(n_resamples):
        drawn = rng.integers(len(members), size=len(members)) if len(members) > 1 else [0]
        means[b] = np.concatenate([members[i][rng.integers(len(members[i]), size=len(members[i]))]
                                   for i in drawn]).mean()
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(means, [alpha, 1 - alpha])
    return float(x.mean()), float(lo), float(hi)
