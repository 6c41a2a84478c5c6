"""A chapter's recorded full-scale run, as its ci notebooks read it (DESIGN.md §5): `data/<slug>/full-run.json`.

    full = FullRun.load("specgd")        # a clear error when the chapter has no record
    full.glue()                          # full-<claim id>-observed, full-commit, full-date, full-minutes …
    full.observed("spec-beats-gd")       # and full-<name> for every number the full run glued
    full.value("depth_gap")

The records themselves (what a full run writes, and the seed sweeps' records) are `repro.book.records`. How to read
them is explained on chapters/appendix/reproducibility.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from .claims import PlainText, glue_quietly
from .records import FULL_PREFIX, RECORD_PATH, _recorded, read_record, rerun_command
from .verdicts import outcome


def _book_root() -> Path:
    from repro import ROOT

    return ROOT


@dataclass
class FullRun:
    """A chapter's recorded full-scale run, as its ci notebooks read it (module docstring)."""

    chapter: str
    record: dict

    @classmethod
    def load(cls, chapter: str, root: Path | None = None, *, missing_ok: bool = False) -> "FullRun":
        """Read `data/<chapter>/full-run.json`; a missing record raises FileNotFoundError with the command to run.

        `missing_ok=True` (a notebook passes `missing_ok=run.full`: the full run being recorded may be the first)
        gives an empty record instead, which glues nothing.
        """
        root = _book_root() if root is None else Path(root)
        record = read_record(root, chapter)
        if record is None and missing_ok:
            return cls(chapter, {"commit": "", "date": "", "notebooks": [], "claims": [], "glued": {}})
        if record is None:
            raise FileNotFoundError(f"{RECORD_PATH.format(slug=chapter)} is missing: chapter {chapter!r} has no "
                                    f"record of a full-scale run. Make one with `{rerun_command(chapter)}`.")
        return cls(chapter, record)

    @property
    def commit(self) -> str:
        """The first 10 hex digits of the commit the run was made from."""
        return self.record["commit"][:10]

    @property
    def date(self) -> str:
        """The day the run finished (YYYY-MM-DD, UTC)."""
        return self.record["date"][:10]

    @property
    def minutes(self) -> float:
        """Minutes the chapter's notebooks took in that run."""
        return sum(nb["seconds"] for nb in self.record["notebooks"]) / 60

    def claim(self, claim_id: str) -> dict:
        """The record of one claim; KeyError naming the claims there are when it is not in the record."""
        for c in self.record["claims"]:
            if c["id"] == claim_id:
                return c
        known = ", ".join(c["id"] for c in self.record["claims"])
        raise KeyError(f"claim {claim_id!r} is not in {RECORD_PATH.format(slug=self.chapter)} (it has: {known}); "
                       f"if the chapter added it since, rerun `{rerun_command(self.chapter)}`")

    def observed(self, claim_id: str) -> float:
        """A claim's observed value in the full run (NaN when it had none)."""
        value = self.claim(claim_id)["observed"]
        return math.nan if value is None else value

    def holds(self, claim_id: str) -> bool | None:
        """Whether the claim held in the full run (None when it was untestable there)."""
        held = self.claim(claim_id)["holds"]
        return None if held is None else bool(held)

    def value(self, name: str):
        """A number (or short text) that a notebook of the full run glued under `name`."""
        for glued in self.record.get("glued", {}).values():
            if name in glued:
                return _recorded(glued[name])
        raise KeyError(f"the full run recorded in {RECORD_PATH.format(slug=self.chapter)} glued no {name!r}; if the "
                       f"chapter glues it since, rerun `{rerun_command(self.chapter)}`")

    def glue(self) -> None:
        """Glue `full-commit`, `full-date`, `full-minutes`, `full-machine`; for each claim `full-<id>-observed` and
        `full-<id>-verdict` (held / not held); and every value the full run glued, as `full-<its name>`."""
        if not self.record["commit"]:
            return
        values = {"full-commit": PlainText(self.commit), "full-date": PlainText(self.date),
                  "full-minutes": self.minutes, "full-machine": PlainText(self.record.get("machine", ""))}
        for c in self.record["claims"]:
            values[f"full-{c['id']}-observed"] = self.observed(c["id"])
            values[f"full-{c['id']}-verdict"] = PlainText(outcome(c["holds"]))
        for glued in self.record.get("glued", {}).values():
            values.update({f"full-{k}": v if isinstance(v, float) else PlainText(v)
                           for k, v in ((k, _recorded(v)) for k, v in glued.items()) if not k.startswith(FULL_PREFIX)})
        glue_quietly(values)
