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


def paired_difference_ci(on_runs, off_runs, key: str = "r_pop", seed: int = 0) -> tuple[float, float, float]:
    """Mean of the run-by-run difference on − off of `key` (in points) and its 95% percentile bootstrap interval over
    the pairs of runs (`repro.common.bootstrap_ci`); pairs where either rate is undefined (NaN) are left out.
    (chapters/fraud-agents/02_experiments.md)"""
    from ..common import bootstrap_ci

    if len(on_runs) != len(off_runs):
        raise ValueError(f"paired_difference_ci needs two lists of runs of equal length, got {len(on_runs)} and "
                         f"{len(off_runs)}")
    diff = 100 * np.array([a[key] - b[key] for a, b in zip(on_runs, off_runs)], float)
    diff = diff[np.isfinite(diff)]
    if len(diff) < 2:
        raise ValueError(f"paired_difference_ci needs at least 2 pairs with a defined {key}, got {len(diff)}")
    return bootstrap_ci(diff, seed=seed)


def rate_difference_ci(runs_a, runs_b, n_a: int, n_b: int, key: str = "n_victims", n_resamples: int = 2000,
                       seed: int = 0, confidence: float = 0.95) -> tuple[float, float, float]:
    """R_pop of condition a minus that of condition b (points), the mean over runs paired by seed, with a percentile
    interval from a two-stage bootstrap: the pairs of runs with replacement (when there are two or more), then the
    users of each run, drawn again (a binomial draw of `key`, the defrauded users, at the run's own rate out of its
    `n_a` or `n_b` users). With one pair it is the bootstrap over users alone, which leaves the runs' own spread out.
    (chapters/fraud-agents/02_experiments.md)"""
    ka = np.array([r[key] for r in runs_a], float)
    kb = np.array([r[key] for r in runs_b], float)
    n_a, n_b = check_int("n_a", n_a), check_int("n_b", n_b)
    if len(ka) != len(kb) or len(ka) < 1:
        raise ValueError(f"rate_difference_ci needs two equal, non-empty lists of runs, got {len(ka)} and {len(kb)}")
    B, m = check_int("n_resamples", n_resamples), len(ka)
    rng = np.random.default_rng(seed)
    pick = rng.integers(m, size=(B, m)) if m > 1 else np.zeros((B, 1), int)
    diffs = 100 * (rng.binomial(n_a, ka[pick] / n_a) / n_a - rng.binomial(n_b, kb[pick] / n_b) / n_b).mean(1)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(diffs, [alpha, 1 - alpha])
    return float(100 * (ka / n_a - kb / n_b).mean()), float(lo), float(hi)


#: The grid of the calibration (development seeds only): α of the transfer hazard, and the engagement rate.
CAL_ALPHAS = (-6.5, -6.0, -5.5, -5.0)
CAL_ENGAGES = (0.004, 0.007, 0.012, 0.02)
CAL_SEEDS = tuple(range(100, 124))


def response_grid(config: Config, seeds, base: Hazard = Hazard(), alphas=CAL_ALPHAS, engages=CAL_ENGAGES) -> dict:
    """R_pop and R_conv, each the mean over runs with `seeds`, at every (α, engagement) of the grid: arrays of shape
    (len(alphas), len(engages)). (chapters/fraud-agents/02_experiments.md)"""
    alphas, engages, seeds = [float(a) for a in alphas], [float(e) for e in engages], [int(s) for s in seeds]
    if len(alphas) < 3 or len(engages) < 3:
        raise ValueError(f"response_grid needs at least 3 values of alpha and of engage, got {len(alphas)} and "
                         f"{len(engages)}")
    if min(engages) <= 0:
        raise ValueError(f"engage values must be positive, got {engages}")
    if not seeds:
        raise ValueError("response_grid needs at least one seed")
    r_pop, r_conv = np.zeros((len(alphas), len(engages))), np.zeros((len(alphas), len(engages)))
    for i, a in enumerate(alphas):
        for j, e in enumerate(engages):
            r = replicate(config, replace(base, alpha=a, engage=e), seeds)
            r_pop[i, j], r_conv[i, j] = r["r_pop"], r["r_conv"]
    return {"alphas": alphas, "engages": engages, "seeds": seeds, "r_pop": r_pop, "r_conv": r_conv}


def _quadratic_terms(alpha, log_engage):
    a, l = np.asarray(alpha, float), np.asarray(log_engage, float)
    return np.stack([np.ones_like(a), a, l, a * a, l * l, a * l], axis=-1)


def fit_surface(grid: dict, key: str) -> np.ndarray:
    """Least-squares coefficients of a quadratic in (α, log engagement) through the grid's `key` ("r_pop" or
    "r_conv"): the response surface. (chapters/fraud-agents/02_experiments.md)"""
    if key not in ("r_pop", "r_conv"):
        raise ValueError(f"key must be 'r_pop' or 'r_conv', got {key!r}")
    a, l = np.meshgrid(grid["alphas"], np.log(grid["engages"]), indexing="ij")
    X = _quadratic_terms(a.ravel(), l.ravel())
    return np.linalg.lstsq(X, np.asarray(grid[key], float).ravel(), rcond=None)[0]


def surface(coef: np.ndarray, alpha, engage) -> np.ndarray:
    """The fitted response surface at (α, engagement). (chapters/fraud-agents/02_experiments.md)"""
    return _quadratic_terms(alpha, np.log(engage)) @ np.asarray(coef, float)


def solve_targets(grid: dict, targets: dict = TARGETS) -> tuple[float, float]:
    """(α, engagement) inside the grid's box at which both fitted surfaces meet their targets (least squares on the
    relative errors). (chapters/fraud-agents/02_experiments.md)"""
    import scipy.optimize

    coefs = {k: fit_surface(grid, k) for k in ("r_pop", "r_conv")}

    def errors(x):
        return [(surface(coefs[k], x[0], np.exp(x[1])) - targets[k]) / targets[k] for k in ("r_pop", "r_conv")]

    lo = [min(grid["alphas"]), np.log(min(grid["engages"]))]
    hi = [max(grid["alphas"]), np.log(max(grid["engages"]))]
    x = scipy.optimize.least_squares(errors, x0=[(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2], bounds=(lo, hi)).x
    return float(x[0]), float(np.exp(x[1]))


def calibrate(config: Config, seeds=CAL_SEEDS, base: Hazard = Hazard(), alphas=CAL_ALPHAS,
              engages=CAL_ENGAGES) -> tuple[Hazard, dict]:
    """Fit α (mostly R_conv) and the engagement rate (mostly R_pop) to TARGETS: run the grid on the (development)
    seeds, fit a quadratic response surface to each rate, and solve for the point where both meet their targets.
    Both parameters move both rates, and the mean over a few dozen runs is noisy, so a surface through all the grid's
    runs is steadier than bisecting one parameter at a time. Returns the hazard and the grid.
    (chapters/fraud-agents/02_experiments.md)"""
    grid = response_grid(config, seeds, base, alphas, engages)
    alpha, engage = solve_targets(grid)
    return replace(base, alpha=alpha, engage=engage), grid


def fit_check(runs, targets: dict = TARGETS, level: float = 0.95) -> dict:
    """How far each target lies from the mean of its rate over `runs` (points) and the half-width of the `level`
    t-interval of that mean; `worst` is the largest distance beyond the half-width (> 0: a target lies outside its
    interval). Runs whose rate is undefined (NaN) are left out. (chapters/fraud-agents/02_experiments.md)"""
    import scipy.stats

    out, worst = {}, -np.inf
    for key, target in targets.items():
        x = 100 * np.array([r[key] for r in runs], float)
        x = x[np.isfinite(x)]
        if len(x) < 2:
            raise ValueError(f"fit_check needs at least 2 runs with a defined {key}, got {len(x)}")
        half = float(scipy.stats.t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)))
        gap = float(x.mean() - 100 * target)
        out[key] = {"gap": gap, "half_width": half}
        worst = max(worst, abs(gap) - half)
    out["worst"] = float(worst)
    return out


def log_digest(log) -> str:
    """A SHA-256 of the event log, to compare two runs bit for bit. (chapters/fraud-agents/02_experiments.md)"""
    return hashlib.sha256(repr(log).encode()).hexdigest()


def write_calibration(path, seeds=CAL_SEEDS) -> dict:
    """Calibrate on development seeds and write the fitted hazard, the grid it was fitted on and its provenance as
    JSON (data/fraud-agents/). (chapters/fraud-agents/02_experiments.md)"""
    import json

    from ..common import provenance_record

    h, grid = calibrate(Config(), list(seeds))
    rec = {"hazard": h.__dict__, "targets": TARGETS,
           "grid": {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in grid.items()},
           "provenance": provenance_record(command=f"write_calibration(path, seeds=range({min(seeds)}, "
                                                   f"{max(seeds) + 1}))", seed=min(seeds))}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(rec, f, indent=1)
    return rec


def load_calibration(path) -> tuple[Hazard, dict]:
    """The hazard and the grid written by :func:`write_calibration`. (chapters/fraud-agents/02_experiments.md)"""
    import json
    from pathlib import Path

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no calibration file at {path}; make it with "
                                f"`python -c 'from repro.fraud_agents.experiment import write_calibration; "
                                f"write_calibration(\"{path}\")'`")
    with open(path, encoding="utf-8") as f:
        rec = json.load(f)
    grid = {k: (np.asarray(v) if k in ("r_pop", "r_conv") else v) for k, v in rec["grid"].items()}
    return Hazard(**rec["hazard"]), grid
