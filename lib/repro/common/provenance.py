"""The provenance record of a file shipped under data/ (DESIGN.md §5): what made it, from which commit, when.

Explained in chapters/appendix/reproducibility.md. One record for every kind of shipped file: a checkpoint
(`repro.nn.save_checkpoint` stores it in the torch file) and a log of runs (`repro.moe_grokking.save_log` stores it
as JSON in the .npz). A record is a flat-ish dict of JSON values: ``command``, ``seed``, ``commit``, ``dirty``, ``time``
(UTC, ISO 8601) and whatever else the maker adds (a config, seconds per run).
"""
from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

__all__ = ["git_output", "current_commit", "code_is_dirty", "timestamp", "provenance_record"]


def git_output(*args: str, cwd: Path | None = None) -> str:
    """The stripped output of `git args…` run in `cwd` (the library's folder by default), or "" when git fails, is
    missing or takes over 30 s: the book's one way to ask git.

    Explained in chapters/appendix/reproducibility.md.
    """
    try:
        out = subprocess.run(["git", *args], cwd=cwd or Path(__file__).parent, capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def current_commit() -> str:
    """The short git commit of the library's working tree, or 'unknown' outside a repository.

    Explained in chapters/appendix/reproducibility.md.
    """
    return git_output("rev-parse", "--short", "HEAD") or "unknown"


#: What a shipped file's maker depends on: the library and the locked packages (data/ is being written).
CODE_PATHS = ("lib", "requirements.lock")


def code_is_dirty(root: Path | None = None) -> bool:
    """Whether the library or the lock file differ from the checked-out commit of the repository at `root` (the
    library's own by default), so that `current_commit()` did not make what runs now. False outside a repository,
    where there is no commit to differ from.

    Explained in chapters/appendix/reproducibility.md.
    """
    top = git_output("rev-parse", "--show-toplevel", cwd=root)
    return bool(top) and bool(git_output("status", "--porcelain", "--", *CODE_PATHS, cwd=Path(top)))


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
    """The provenance of a shipped file: ``command``, the given ``fields``, and ``commit``, ``dirty`` (whether the
    library differed from that commit: then the commit did not make the file) and ``time`` unless given.

    Explained in chapters/appendix/reproducibility.md. Values JSON cannot write are stored as their ``str``, so the
    record loads anywhere (``torch.load(weights_only=True)``, ``json.loads``).
    """
    if not isinstance(command, str):
        raise ValueError(f"command must be a string, got {type(command).__name__}")
    record = {"command": command, "commit": current_commit(), "dirty": code_is_dirty(), "time": timestamp()}
    record.update({k: _plain(v) for k, v in fields.items()})
    return record
