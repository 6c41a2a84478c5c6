"""The provenance record of a file shipped under data/ (DESIGN.md §5): what made it, from which commit, when.

Explained in chapters/appendix/reproducibility.md. One record for every kind of shipped file: a checkpoint
(`repro.nn.save_checkpoint` stores it in the torch file) and a log of runs (`repro.moe_grokking.save_log` stores it
as JSON in the .npz). A record is a flat-ish dict of JSON values: ``command``, ``seed``, ``commit``, ``time`` (UTC,
ISO 8601) and whatever else the maker adds (a config, seconds per run).
"""
from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

__all__ = ["current_commit", "timestamp", "provenance_record"]


def current_commit() -> str:
    """The short git commit of the library's working tree, or 'unknown' outside a repository.

    Explained in chapters/appendix/reproducibility.md.
    """
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True, cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def timestamp() -> str:
    """The current UTC time, ISO 8601 to the second: ``2026-01-31T12:00:00Z``.

    Explained in chapters/appendix/reproducibility.md.
    """
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _plain(value):
    """``value`` if JSON can write it as it is, else its ``str``."""
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)


def provenance_record(command: str = "", **fields) -> dict:
    """The provenance of a shipped file: ``command``, the given ``fields``, and ``commit`` and ``time`` unless given.

    Explained in chapters/appendix/reproducibility.md. Values JSON cannot write are stored as their ``str``, so the
    record loads anywhere (``torch.load(weights_only=True)``, ``json.loads``).
    """
    if not isinstance(command, str):
        raise ValueError(f"command must be a string, got {type(command).__name__}")
    record = {"command": command, "commit": current_commit(), "time": timestamp()}
    record.update({k: _plain(v) for k, v in fields.items()})
    return record
