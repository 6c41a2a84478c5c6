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

__all__ = ["save_log", "load_log", "make_shipped_runs"]


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
