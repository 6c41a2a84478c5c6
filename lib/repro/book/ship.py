"""`python -m repro.book ship SLUG [--seed N] [--allow-dirty]`: remake a chapter's shipped models and run logs.

A chapter whose training is too slow for its ci budget ships the result under ``data/<slug>/`` (DESIGN.md §5), each
file written through `repro.nn.checkpoint` with its provenance record. Every such chapter has one function
``ship(seed=None) -> list[Path]`` that retrains and rewrites its files (those of one seed when `seed` is given);
`SHIPPERS` names it, and it is imported only when called. Like the record writers (`repro.book.records`), `ship`
refuses to write from uncommitted code, since the files' provenance names the commit that made them; with
``allow_dirty`` it writes them anyway and their provenance says ``dirty: true``.
"""
from __future__ import annotations

import importlib
from pathlib import Path

from ..common import thread_limit
from ..common.provenance import code_is_dirty, current_commit

__all__ = ["SHIPPERS", "SEEDLESS", "shipper", "ship"]

#: chapter slug -> "module:function" of the function that remakes its shipped files.
SHIPPERS = {
    "latent-trajectories": "repro.latent_trajectories.model:ship",
    "moe-grokking": "repro.moe_grokking.logs:ship",
    "moe-multilingual": "repro.moe_multilingual.training:ship",
    "neuroadapter": "repro.neuroadapter.shipped:ship",
    "sokoban-planning": "repro.sokoban_planning.experiment:ship",
    "temporal-sae": "repro.temporal_sae.tsae:ship",
    "timeseg": "repro.timeseg.shipped:ship",
}
#: The chapters that ship one set of files, not one per seed (their `ship` takes no seed).
SEEDLESS = ("latent-trajectories", "sokoban-planning", "temporal-sae")


def _book_root() -> Path:
    from .. import DATA_DIR

    return DATA_DIR.parent


def shipper(slug: str, root: Path | None = None):
    """The function that remakes chapter `slug`'s shipped files; ValueError listing the chapters that ship when
    `slug` is not one of them (saying so when it is a chapter that ships nothing)."""
    if slug in SHIPPERS:
        module, name = SHIPPERS[slug].split(":")
        return getattr(importlib.import_module(module), name)
    choices = ", ".join(SHIPPERS)
    if (Path(root or _book_root()) / "chapters" / str(slug) / "index.md").is_file():
        raise ValueError(f"chapter {slug!r} ships no trained models or run logs; the chapters that do: {choices}")
    raise ValueError(f"no chapter {slug!r}; the chapters that ship trained models or run logs: {choices}")


def ship(slug: str, seed: int | None = None, allow_dirty: bool = False, root: Path | None = None) -> list[Path]:
    """Remake chapter `slug`'s shipped files (only `seed`'s when given) on one thread, as they were made; returns the
    paths written. Refuses (ValueError, nothing written) when lib/ or requirements.lock differ from the commit,
    unless `allow_dirty`."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    make = shipper(slug, root)
    if seed is not None and slug in SEEDLESS:
        raise ValueError(f"{slug} ships one set of files, not one per seed: run it without --seed")
    if code_is_dirty() and not allow_dirty:
        raise ValueError(f"ship: lib/ or requirements.lock differ from commit {current_commit()}, so that commit "
                         f"would not have made the files: commit your changes first, or pass --allow-dirty (the "
                         f"files' provenance then says dirty: true)")
    with thread_limit(1):
        return [Path(p) for p in make(seed)]

