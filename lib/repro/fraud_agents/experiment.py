"""Running, replicating and calibrating simulations (chapters/fraud-agents/02_experiments.md)."""
from __future__ import annotations

import hashlib
from dataclasses import replace

import numpy as np

from ..common import check_int
from .metrics import monitor_scores, rates
from .platform import Config, Platform
from .policies import CalibratedPolicy, Hazard

TARGETS = {"r_pop": 0.11, "r_conv": 0.458}   # the paper's DeepSeek-V3 baseline as the brief reports it (3P)


def simulate(config: Config, hazard: Hazard, seed: int) -> Platform:
    """One run of the calibrated policy; returns the platform (its `.log` is the event log).
    (chapters/fraud-agents/02_experiments.md)"""
    plat = Platform(config, seed)
    policy = CalibratedPolicy(hazard, collusion=config.collusion)
    plat.run(policy)
    return plat


def summary(plat: Platform) -> dict:
    """The run's rates and monitor scores. (chapters/fraud-agents/02_experiments.md)"""
    out = rates(plat.log, plat.malicious, plat.config.n_benign)
    out.update({f"monitor_{k}": v for k, v in monitor_scores(plat.log, plat.malicious).items()})
    return out


def replicate(config: Config, hazard: Hazard, seeds) -> dict:
    """Mean of each summary over runs with the given seeds (NaN-aware), and the per-run values.
    (chapters/fraud-agents/02_experiments.md)"""
    runs = [summary(simulate(config, hazard, int(s))) for s in seeds]
    keys = runs[0].keys()
    mean = {k: float(np.nanmean([r[k] for r in runs])) if any(r[k] == r[k] for r in runs) else float("nan")
            for k in keys}
    mean["runs"] = runs
    return mean


def paired_interval(on_runs, off_runs, key: str = "r_pop", level: float = 0.90) -> tuple[float, float, float]:
    """Mean of the run-by-run difference on − off of `key` (in points), and its `level` t-interval over the pairs.
    (chapters/fraud-agents/02_experiments.md)"""
    import scipy.stats

    if len(on_runs) != len(off_runs) or len(on_runs) < 2:
        raise ValueError(f"paired_interval needs two lists of at least 2 runs of equal length, got {len(on_runs)} "
                         f"and {len(off_runs)}")
    diff = 100 * np.array([a[key] - b[key] for a, b in zip(on_runs, off_runs)])
    half = scipy.stats.t.ppf(0.5 + level / 2, len(diff) - 1) * diff.std(ddof=1) / np.sqrt(len(diff))
    return float(diff.mean()), float(diff.mean() - half), float(diff.mean() + half)


def calibrate(config: Config, seeds, base: Hazard = Hazard(), rounds: int = 2, steps: int = 6) -> Hazard:
    """Fit α (to R_conv) and the engagement rate (to R_pop, bisected on a log scale in [0.001, 0.3]) to TARGETS by
    alternating bisection, each trial the mean over runs with the given (development) seeds.
    (chapters/fraud-agents/02_experiments.md)"""
    check_int("rounds", rounds)
    check_int("steps", steps)
    h = base
    for _ in range(rounds):
        lo, hi = -8.0, -3.0
        for _ in range(steps):
            mid = (lo + hi) / 2
            r = replicate(config, replace(h, alpha=mid), seeds)
            lo, hi = (mid, hi) if r["r_conv"] < TARGETS["r_conv"] else (lo, mid)
        h = replace(h, alpha=(lo + hi) / 2)
        lo, hi = np.log(1e-3), np.log(0.3)
        for _ in range(steps):
            mid = (lo + hi) / 2
            r = replicate(config, replace(h, engage=float(np.exp(mid))), seeds)
            lo, hi = (mid, hi) if r["r_pop"] < TARGETS["r_pop"] else (lo, mid)
        h = replace(h, engage=float(np.exp((lo + hi) / 2)))
    return h


def log_digest(log) -> str:
    """A SHA-256 of the event log, to compare two runs bit for bit. (chapters/fraud-agents/02_experiments.md)"""
    return hashlib.sha256(repr(log).encode()).hexdigest()


def write_calibration(path, seeds=range(100, 108), rounds: int = 2, steps: int = 6) -> dict:
    """Calibrate on development seeds and write the fitted hazard with its provenance as JSON (data/fraud-agents/).
    (chapters/fraud-agents/02_experiments.md)"""
    import json

    from ..common import provenance_record

    h = calibrate(Config(), list(seeds), rounds=rounds, steps=steps)
    rec = {"hazard": h.__dict__, "targets": TARGETS,
           "provenance": provenance_record(command=f"write_calibration(seeds={list(seeds)}, rounds={rounds}, "
                                                   f"steps={steps})", seed=min(seeds))}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(rec, f, indent=1)
    return rec


def load_calibration(path) -> Hazard:
    """The hazard written by :func:`write_calibration`. (chapters/fraud-agents/02_experiments.md)"""
    import json

    with open(path, encoding="utf-8") as f:
        return Hazard(**json.load(f)["hazard"])
