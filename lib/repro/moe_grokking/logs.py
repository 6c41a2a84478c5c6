"""The shipped logs under data/moe-grokking/: one .npz per seed, {run name: log} with its provenance record.

Explained in chapters/moe-grokking/02_experiments.md, which loads them at scale="ci" and reruns them at "full".
"""
from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np

from ..common import provenance_record
from .config import GrokkingConfig
from .training import run_experiments

__all__ = ["save_log", "load_log", "make_shipped_runs", "make_pilot", "NoShippedRun", "no_shipped_run"]


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
    record = provenance_record(**provenance)
    np.savez_compressed(path, provenance=np.array(json.dumps(record)), **flat)


def load_log(path) -> tuple[dict, dict]:
    """Read a file written by `save_log`: ({run name: log}, provenance). See chapters/moe-grokking/02_experiments.md."""
    with np.load(path, allow_pickle=False) as z:
        prov = json.loads(str(z["provenance"]))
        logs: dict = {}
        for key in z.files:
            if key == "provenance":
                continue
            name, field = key.split("/", 1)
            v = z[key]
            logs.setdefault(name, {})[field] = v.item() if v.ndim == 0 else v
    return logs, prov


def make_shipped_runs(path, seed: int, cfg: GrokkingConfig = GrokkingConfig(), p: int = 31, command: str = "") -> dict:
    """Run `run_experiments` and save the logs with their provenance (command, seed, config, commit, time).

    Explained in chapters/moe-grokking/02_experiments.md (what `scale="full"` reruns).
    """
    logs = run_experiments(seed, cfg, p)
    save_log(path, logs, command=command, seed=int(seed), p=int(p), config=asdict(cfg),
             seconds={v: round(float(log["seconds"]), 1) for v, log in logs.items()})
    return logs


class NoShippedRun(FileNotFoundError):
    """A seed asked for at scale="ci" has no shipped logs. In a notebook it shows as one message, no traceback.

    Explained in chapters/moe-grokking/02_experiments.md.
    """

    def _render_traceback_(self):
        return [f"\x1b[31m{type(self).__name__}\x1b[0m: {self}"]


def no_shipped_run(path, seed: int, steps_per_s: float, n_runs: int, steps: int) -> NoShippedRun:
    """The error for a seed without shipped logs: which files exist, how long a retrain takes, how to start it.

    `steps_per_s` is a measured training speed; `n_runs` runs of `steps` steps each make one seed's logs.
    Explained in chapters/moe-grokking/02_experiments.md.
    """
    from pathlib import Path

    path = Path(path)
    shipped = sorted(p.stem.removeprefix("seed") for p in path.parent.glob("seed*.npz"))
    minutes = n_runs * steps / max(float(steps_per_s), 1e-9) / 60
    return NoShippedRun(
        f"seed={seed} has no shipped runs ({path.name} is missing; shipped seeds: {', '.join(shipped) or 'none'}). "
        f"At scale=\"ci\" the chapter reads shipped runs instead of training. Retraining this seed's {n_runs} runs of "
        f"{steps} steps takes about {minutes:.0f} minutes on this machine (measured here: {steps_per_s:.1f} steps/s, "
        f"on a short run whose first steps and evaluations are slow). "
        f"To retrain, run the notebook with scale=\"full\", or write the file once with "
        f"repro.moe_grokking.make_shipped_runs(\"{path}\", seed={seed}) and rerun at ci.")


def make_pilot(path, groups, seed: int, cfg: GrokkingConfig = GrokkingConfig(), p: int = 31, command: str = "") -> dict:
    """Train the main run on a candidate mixture `groups` and save its log with the settings (a design pilot).

    The pilots that chose the mixture, the model and the budget are shipped under data/moe-grokking/pilots/ and read
    by chapters/moe-grokking/02_experiments.md. Pilots run on a development seed (100 and up), never on a reported one.
    """
    from ..data.grokking_mix import make_grokking_mix
    from .training import train_monitored

    groups = [(str(op), float(frac)) for op, frac in groups]
    log = train_monitored(make_grokking_mix(p=p, groups=groups, seed=seed), cfg, seed=seed)
    save_log(path, {"main": log}, command=command, seed=int(seed), p=int(p), groups=groups, config=asdict(cfg),
             seconds=round(float(log["seconds"]), 1))
    return log
