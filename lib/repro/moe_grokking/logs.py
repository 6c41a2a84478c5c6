"""The shipped logs under data/moe-grokking/: one .npz per run (runs/seed<k>-<variant>.npz) with its provenance record.

Explained in chapters/moe-grokking/02_experiments.md, which loads them at scale="ci" and reruns them at "full".
The files are `repro.nn.checkpoint.save_arrays` files; `python -m repro.book ship moe-grokking [--seed N]` remakes
the runs (`ship`). The pilots under pilots/ and redesign-pilots/ are the design's record and are not remade.
"""
from __future__ import annotations

from dataclasses import asdict

import numpy as np

from .. import DATA_DIR
from ..common import check_int
from ..nn.checkpoint import load_arrays, save_arrays, ship_command
from .config import GrokkingConfig
from .training import run_experiments

__all__ = ["save_log", "load_log", "make_shipped_run", "run_file", "load_runs", "shipped_seeds", "make_pilot",
           "NoShippedRun", "no_shipped_seed", "RUNS_DIR", "SHIPPED_SEEDS", "ship"]

#: Where the shipped runs live, and the seeds whose runs (every variant) are shipped.
RUNS_DIR = DATA_DIR / "moe-grokking" / "runs"
SHIPPED_SEEDS = (0, 1, 2)


def _small(v):
    """float64 arrays as float32 (the logs are curves; float32 halves the file); everything else as it is."""
    v = np.asarray(v)
    return v.astype(np.float32) if v.dtype == np.float64 and v.ndim else v


def save_log(path, logs: dict, **provenance) -> None:
    """Save {run name: log} to one .npz with its provenance record (`repro.common.provenance_record`) as JSON.

    Explained in chapters/moe-grokking/02_experiments.md. `provenance` are the record's fields (command, seed ...);
    the record adds the commit and the UTC time unless given.
    """
    flat = {f"{name}/{key}": _small(v) for name, log in logs.items() for key, v in log.items()}
    save_arrays(path, flat, **provenance)


def load_log(path) -> tuple[dict, dict]:
    """Read a file written by `save_log`: ({run name: log}, provenance). See chapters/moe-grokking/02_experiments.md."""
    arrays, prov = load_arrays(path)
    logs: dict = {}
    for key, v in arrays.items():
        name, field = key.split("/", 1)
        logs.setdefault(name, {})[field] = v.item() if v.ndim == 0 else v
    return logs, prov


def run_file(directory, seed: int, variant: str):
    """Where one shipped run lives: `directory/seed<seed>-<variant>.npz` (one file per run keeps each under 2 MB).

    Explained in chapters/moe-grokking/02_experiments.md.
    """
    from pathlib import Path

    return Path(directory) / f"seed{int(seed)}-{variant}.npz"


def make_shipped_run(directory, seed: int, variant: str, cfg: GrokkingConfig = GrokkingConfig(), p: int = 31,
                     groups=None, command: str = "") -> dict:
    """Train one run (`variant` of `VARIANTS`) of one seed and save its log to `run_file(directory, seed, variant)`,
    with its provenance (command, seed, variant, p, groups, configuration, commit, time, seconds).

    One process per run, one thread each, is how the shipped runs were made (chapters/moe-grokking/02_experiments.md).
    """
    from .grokking_mix import DEFAULT_GROUPS

    groups = [(str(op), float(frac)) for op, frac in (DEFAULT_GROUPS if groups is None else groups)]
    log = run_experiments(seed, cfg, p, variants=(variant,), groups=groups)[variant]
    save_log(run_file(directory, seed, variant), {variant: log}, command=command, seed=int(seed), variant=variant,
             p=int(p), groups=groups, config=asdict(cfg), seconds=round(float(log["seconds"]), 1))
    return log


def load_runs(directory, seed: int, variants=None) -> tuple[dict, dict]:
    """The shipped runs of one seed, one file each (`run_file`): ({variant: log}, {variant: provenance}).

    Raises `NoShippedRun` naming the missing files when any of `variants` (default: `SHIPPED_VARIANTS`) is not there;
    every other run of `VARIANTS` that is shipped for the seed is read too.
    Explained in chapters/moe-grokking/02_experiments.md.
    """
    from .config import SHIPPED_VARIANTS, VARIANTS

    variants = tuple(SHIPPED_VARIANTS if variants is None else variants)
    missing = [run_file(directory, seed, v).name for v in variants if not run_file(directory, seed, v).is_file()]
    if missing:
        raise NoShippedRun(f"seed={seed}: no shipped run {', '.join(missing)} in {directory}")
    logs, provenance = {}, {}
    for v in [v for v in VARIANTS if v in variants or run_file(directory, seed, v).is_file()]:
        one, provenance[v] = load_log(run_file(directory, seed, v))
        logs[v] = one[v]
    return logs, provenance


def shipped_seeds(directory, variants=None) -> list[int]:
    """The seeds with every run of `variants` (default: `SHIPPED_VARIANTS`) shipped in `directory`, sorted.

    Explained in chapters/moe-grokking/02_experiments.md.
    """
    from pathlib import Path

    from .config import SHIPPED_VARIANTS

    variants = tuple(SHIPPED_VARIANTS if variants is None else variants)
    seeds = {int(p.name.removeprefix("seed").split("-", 1)[0]) for p in Path(directory).glob("seed*-*.npz")}
    return sorted(s for s in seeds if all(run_file(directory, s, v).is_file() for v in variants))


class NoShippedRun(FileNotFoundError):
    """A seed asked for at scale="ci" has no shipped logs. In a notebook it shows as one message, no traceback.

    Explained in chapters/moe-grokking/02_experiments.md.
    """

    def _render_traceback_(self):
        return [f"\x1b[31m{type(self).__name__}\x1b[0m: {self}"]


def no_shipped_seed(directory, seed: int, steps_per_s: float, n_runs: int, steps: int) -> NoShippedRun:
    """The error for a seed without shipped runs in `directory` (one file per run, `run_file`): the seeds that are
    shipped, how long a retrain takes at the measured `steps_per_s` for `n_runs` runs of `steps` steps, and how to
    start it. Explained in chapters/moe-grokking/02_experiments.md.
    """
    minutes = n_runs * steps / max(float(steps_per_s), 1e-9) / 60
    shipped = ", ".join(str(s) for s in shipped_seeds(directory)) or "none"
    return NoShippedRun(
        f"seed={seed} has no shipped runs in {directory} (shipped seeds: {shipped}). At scale=\"ci\" the chapter "
        f"reads shipped runs instead of training. Retraining this seed's {n_runs} runs of {steps} steps takes about "
        f"{minutes:.0f} minutes on this machine (measured here: {steps_per_s:.1f} steps/s on a short run, one "
        f"thread). To retrain, run the notebook with scale=\"full\", or write the files once with "
        f"`{ship_command('moe-grokking', seed)}` and rerun at ci.")


def make_pilot(path, groups, seed: int, cfg: GrokkingConfig = GrokkingConfig(), p: int = 31, command: str = "") -> dict:
    """Train the main run on a candidate mixture `groups` and save its log with the settings (a design pilot).

    The pilots that chose the mixture, the model and the budget are shipped under data/moe-grokking/pilots/ and read
    by chapters/moe-grokking/02_experiments.md. Pilots run on a development seed (100 and up), never on a reported one.
    """
    from .grokking_mix import make_grokking_mix
    from .training import train_monitored

    groups = [(str(op), float(frac)) for op, frac in groups]
    log = train_monitored(make_grokking_mix(p=p, groups=groups, seed=seed), cfg, seed=seed)
    save_log(path, {"main": log}, command=command, seed=int(seed), p=int(p), groups=groups, config=asdict(cfg),
             seconds=round(float(log["seconds"]), 1))
    return log


def ship(seed: int | None = None) -> list:
    """Train and write every run of `VARIANTS` of `seed` (default: every seed of `SHIPPED_SEEDS`) to `RUNS_DIR`, one
    thread, one run after another; returns the paths. `python -m repro.book ship moe-grokking [--seed N]` calls it.

    Explained in chapters/moe-grokking/02_experiments.md.
    """
    from .config import VARIANTS

    seeds = SHIPPED_SEEDS if seed is None else (check_int("seed", seed, low=0),)
    paths = []
    for s in seeds:
        for variant in VARIANTS:
            make_shipped_run(RUNS_DIR, s, variant, command=ship_command("moe-grokking", s))
            paths.append(run_file(RUNS_DIR, s, variant))
    return paths
