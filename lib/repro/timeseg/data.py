"""Time series with known explanations: two TimeX-style generators, and GunPoint from the UCR archive.

Explained in chapters/timeseg/02_experiments.md. Each generator returns a ``Series`` of ``x`` (n, T) float32,
labels ``y`` (n,) and the ground-truth mask ``truth`` (n, T) bool of the time steps that decide the label. They are
written *in the style of* the TimeX generators (Queen et al., 2023), not copies of them:

- ``seqcomb``: an AR(1) background with two ramps (rising or falling, each 10–20 % of ``T`` long) at random,
  non-overlapping places; the label is the unordered pair of ramp directions (up-up, down-down, mixed: 3 classes);
  the truth is both ramps, so a correct explanation needs two segments.
- ``lowvar``: white noise of unit variance with one window (20 % of ``T``) whose standard deviation is 0.1; the
  label is the tercile of the window's centre; the truth is the window.

GunPoint (50 training and 150 test series of length 150, two classes, no ground truth) is read from the TSV files
that the official TimeSeg repository commits, shipped under ``data/timeseg/``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..common.checks import check_choice, check_int

__all__ = ["Series", "seqcomb", "lowvar", "gunpoint", "make_dataset", "GENERATORS"]


@dataclass(frozen=True)
class Series:
    """A labelled set of univariate series, with the ground-truth mask where one is known (else None).

    Explained in chapters/timeseg/02_experiments.md.
    """

    x: np.ndarray
    y: np.ndarray
    truth: np.ndarray | None
    n_classes: int

    @property
    def length(self) -> int:
        """T, the number of time steps. Explained in chapters/timeseg/02_experiments.md."""
        return int(self.x.shape[1])

    def subset(self, idx) -> "Series":
        """The series at ``idx``. Explained in chapters/timeseg/02_experiments.md."""
        return Series(self.x[idx], self.y[idx], None if self.truth is None else self.truth[idx], self.n_classes)


def _ramp(length: int, amplitude: float, up: bool) -> np.ndarray:
    r = np.linspace(-amplitude, amplitude, length)
    return r if up else r[::-1]


def seqcomb(n: int, length: int = 100, seed: int = 0, amplitude: float = 1.5, phi: float = 0.8,
            noise: float = 0.3) -> Series:
    """SeqComb-like series: AR(1) background (``phi``, innovation sd ``noise``) plus two ramps of
    ``±amplitude``; label 0 = both rising, 1 = both falling, 2 = one of each.

    Explained in chapters/timeseg/02_experiments.md.
    """
    n, length = check_int("n", n), check_int("length", length, low=40)
    rng = np.random.default_rng(check_int("seed", seed, low=0))
    x = np.zeros((n, length))
    e = rng.normal(0.0, noise, (n, length))
    x[:, 0] = e[:, 0] / np.sqrt(1 - phi ** 2)
    for t in range(1, length):
        x[:, t] = phi * x[:, t - 1] + e[:, t]
    truth = np.zeros((n, length), bool)
    y = rng.integers(0, 3, n)
    lo, hi = max(3, length // 10), max(4, length // 5)
    for i in range(n):
        ups = {0: (True, True), 1: (False, False), 2: tuple(rng.permutation([True, False]))}[int(y[i])]
        while True:                                   # two places, non-overlapping with a gap of 2
            ls = rng.integers(lo, hi + 1, 2)
            ss = [rng.integers(0, length - ls[0] + 1), rng.integers(0, length - ls[1] + 1)]
            a, b = sorted(zip(ss, ls))
            if a[0] + a[1] + 2 <= b[0]:
                break
        for (s, ell), up in zip(sorted(zip(ss, ls)), ups):
            x[i, s:s + ell] += _ramp(int(ell), amplitude, bool(up))
            truth[i, s:s + ell] = True
    return Series(x.astype(np.float32), y.astype(np.int64), truth, 3)


def lowvar(n: int, length: int = 100, seed: int = 0, low_sd: float = 0.1) -> Series:
    """LowVar-like series: N(0, 1) noise with one window of 20 % of ``length`` at standard deviation ``low_sd``;
    the label is the tercile (0, 1, 2) of the window's centre.

    Explained in chapters/timeseg/02_experiments.md.
    """
    n, length = check_int("n", n), check_int("length", length, low=20)
    rng = np.random.default_rng(check_int("seed", seed, low=0))
    x = rng.normal(0.0, 1.0, (n, length))
    w = length // 5
    starts = rng.integers(0, length - w + 1, n)
    truth = np.zeros((n, length), bool)
    for i, s in enumerate(starts):
        x[i, s:s + w] = rng.normal(0.0, low_sd, w)
        truth[i, s:s + w] = True
    centre = starts + (w - 1) / 2
    y = np.minimum((3 * centre / length).astype(int), 2)
    return Series(x.astype(np.float32), y.astype(np.int64), truth, 3)


def gunpoint(split: str = "train") -> Series:
    """GunPoint (UCR archive; Ratanamahatana & Keogh, 2004) from ``data/timeseg/GunPoint_{TRAIN,TEST}.tsv``:
    labels 1, 2 mapped to 0, 1; no ground truth.

    Explained in chapters/timeseg/02_experiments.md.
    """
    from .. import DATA_DIR

    split = check_choice("split", split, ("train", "test"))
    raw = np.loadtxt(DATA_DIR / "timeseg" / f"GunPoint_{split.upper()}.tsv", delimiter="\t")
    return Series(raw[:, 1:].astype(np.float32), (raw[:, 0] - 1).astype(np.int64), None, 2)


GENERATORS = {"seqcomb": seqcomb, "lowvar": lowvar}


def make_dataset(name: str, n: int, length: int, seed: int) -> Series:
    """``n`` series of a named generator (``"seqcomb"`` or ``"lowvar"``). Explained in
    chapters/timeseg/02_experiments.md."""
    return GENERATORS[check_choice("name", name, tuple(GENERATORS))](n, length, seed)
