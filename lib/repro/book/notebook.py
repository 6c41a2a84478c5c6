"""A notebook's first code cell in one call (DESIGN.md §5), explained on chapters/appendix/reproducibility.md.

    run, ledger = start("specgd", scale=scale, seed=seed, device=device)

does what every notebook's preamble did in three lines: `setup` (validate the parameters, seed, threads, plot style),
`Ledger(chapter)`, and `FullRun.load(chapter, missing_ok=run.full).glue()` (the recorded full run, cited as
`full-<name>`). A page that cites no number of the full run passes `glue_record=False`. The parameters stay in their
own cell tagged `parameters`, where papermill injects a run's values. Several numbers are glued in one call with
`glue_quietly({"name": value, ...})` (`repro.book.claims`).
"""
from __future__ import annotations

from .claims import Ledger
from .full_run import FullRun
from .params import Run, setup


def start(chapter: str, scale="ci", seed=0, device="cpu", *, glue_record: bool = True) -> tuple[Run, Ledger]:
    """Set up a notebook of chapter `chapter`: return its `Run` and a fresh `Ledger`, and glue its full-run record.

    `scale`, `seed`, `device` are the notebook's parameters, checked by `setup` (a `BookParameterError`, a
    ValueError, names a bad one); a bad chapter slug is a ValueError from `Ledger`. With `glue_record=True` the
    chapter's `data/<chapter>/full-run.json` is glued as `full-<name>`: at `scale="full"` a missing record glues
    nothing, at `ci` it is an error naming the command that makes it. Explained in chapters/appendix/reproducibility.md.
    """
    if not isinstance(glue_record, bool):
        raise ValueError(f"glue_record must be True or False, got {glue_record!r}")
    ledger = Ledger(chapter)
    run = setup(scale=scale, seed=seed, device=device)
    if glue_record:
        FullRun.load(chapter, missing_ok=run.full).glue()
    return run, ledger
