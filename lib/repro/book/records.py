"""Records of full-scale runs (DESIGN.md §5): `data/<slug>/full-run.json`.

`python -m repro.book build --scale full --only SLUG --record` writes one record per chapter it ran: the commit the
run was made from, the date, the machine, the seconds of each notebook, every claim's record and every number its
notebooks glued. At `scale="ci"` a
chapter reads its record and glues from it, so that what its prose says about full scale comes from a run that left
evidence:

    full = FullRun.load("specgd")        # a clear error when the chapter has no record
    full.glue()                          # full-<claim id>-observed, full-commit, full-date, full-minutes …
    full.observed("spec-beats-gd")       # and full-<name> for every number the full run glued
    full.value("depth_gap")

The chapter's claim table shows the record's column beside the ci column; a book test fails when a chapter has no
record or when its record names a claim the chapter no longer checks (the record is stale: rerun it). How to read the
records is explained on chapters/appendix/reproducibility.md.
"""
from __future__ import annotations

import json
import math
import platform
import re
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

RECORD_NAME = "full-run.json"
#: Where a record lives, relative to the book's root.
RECORD_PATH = "data/{slug}/" + RECORD_NAME


def record_path(root: Path, slug: str) -> Path:
    """The record file of chapter `slug` under the book root `root`."""
    return Path(root) / RECORD_PATH.format(slug=slug)


def rerun_command(slug: str) -> str:
    """The command that makes (or remakes) the record of chapter `slug`."""
    return f"python -m repro.book build --scale full --only {slug} --record"


def _git(root: Path, *args: str) -> str:
    try:
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def commit_of(root: Path) -> tuple[str, bool]:
    """The commit checked out at `root` and whether the chapters or the library differ from it."""
    commit = _git(root, "rev-parse", "HEAD")
    dirty = bool(_git(root, "status", "--porcelain", "--", "lib", "chapters", "requirements.lock", "data",
                      ":(exclude)data/*/" + RECORD_NAME, ":(exclude)data/*/seeds-run.json"))
    return commit, dirty


_NUMPY_SCALAR = re.compile(r"^np\.(?:float|int|uint)\d*\((.+)\)$")


def as_number_or_text(text):
    """A glued value as the record keeps it: a float where the text is a number, or the repr of a numpy scalar
    (`np.float64(0.5)`, which a notebook glues when it forgets `float()`; older records hold such text), else the
    text without its quotes."""
    if not isinstance(text, str):
        return text
    try:
        return float(_numpy_scalar_value(text))
    except ValueError:
        return text.strip("'\"")


def _numpy_scalar_value(value):
    """The number inside a numpy scalar's repr (`np.float64(0.5)` -> `"0.5"`); anything else unchanged."""
    match = _NUMPY_SCALAR.match(value.strip()) if isinstance(value, str) else None
    return match.group(1) if match else value


def _recorded(value):
    """A record's glued value as it was meant: a numpy scalar's repr (in records written before the writer read
    them) becomes its float; every other value is returned as stored."""
    inner = _numpy_scalar_value(value)
    return float(inner) if inner is not value else value


#: The prefix of every name that `FullRun.glue` glues: values a notebook read from a record, not computed.
FULL_PREFIX = "full-"


def glued_values(ipynb: Path) -> dict:
    """{name: value} of every number (float) or short text that an executed notebook glued, from its outputs.

    Names that `FullRun.glue` glued (`full-…`: what the notebook read from the previous record) are left out, so
    a record holds only what its own run computed and records never nest (`full-full-…`)."""
    if not ipynb.exists():
        return {}
    values = {}
    for cell in json.loads(ipynb.read_text(encoding="utf-8")).get("cells", []):
        for out in cell.get("outputs", []):
            meta = out.get("metadata", {}).get("scrapbook")
            text = out.get("data", {}).get(f"{meta['mime_prefix']}text/plain") if meta else None
            if text is None or len(text) > 200 or meta["name"].startswith(FULL_PREFIX):
                continue
            values[meta["name"]] = as_number_or_text(text)
    return values


def check_recordable(failed: list[str], root: Path) -> str:
    """The one policy of every record writer (full runs and seed sweeps): nothing failed, and the code that ran is a
    commit. Returns the commit; raises ValueError, so nothing is written, otherwise."""
    if failed:
        raise ValueError(f"--record: not recorded, these runs failed: {'; '.join(failed)}")
    commit, dirty = commit_of(root)
    if not commit or dirty:
        raise ValueError("--record: commit your changes first (a record names the commit it ran from, and "
                         "lib/, chapters/, data/ or requirements.lock differ from it)")
    return commit


def write_json_record(path: Path, record: dict) -> Path:
    """Write one record as the book keeps them (indented JSON, UTF-8, a final newline); return its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def make_record(slug: str, entries: list[dict], report: dict, root: Path) -> dict:
    """The record of one chapter's full run, from the build's notebook entries and report.

    Raises ValueError when the run cannot stand as evidence: a notebook failed, the scale was not full, or the code
    that ran is not a commit (uncommitted changes under lib/, chapters/, data/ or the lock file).
    """
    if report["scale"] != "full":
        raise ValueError(f"--record keeps full-scale runs only; this build ran at scale={report['scale']!r}")
    mine = [e for e in entries if e["chapter"] == slug]
    if not mine:
        raise ValueError(f"--record: chapter {slug!r} ran no notebook in this build")
    commit = check_recordable([e["path"] for e in mine if e["status"] == "failed"], root)
    env = report.get("environment", {})
    return {"chapter": slug, "commit": commit, "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "machine": f"{env.get('machine', platform.machine())}, {env.get('cores', '?')} cores",
            "command": rerun_command(slug), "scale": "full", "seed": report["seed"], "device": report["device"],
            "jobs": report["jobs"], "packages": {k: v for k, v in env.items() if k not in ("machine", "cores")},
            "notebooks": [{"path": e["path"], "seconds": e["seconds"], "status": e["status"]} for e in mine],
            "claims": [c for e in mine for c in e["claims"]],
            "glued": {e["path"]: glued_values(root / "_build" / "executed" / Path(e["path"]).with_suffix(".ipynb"))
                      for e in mine}}


def write_records(slugs: list[str], entries: list[dict], report: dict, root: Path) -> list[Path]:
    """Write `data/<slug>/full-run.json` for each chapter in `slugs`; return the files written."""
    records = {slug: make_record(slug, entries, report, root) for slug in slugs}  # all checked before any is written
    return [write_json_record(record_path(root, slug), record) for slug, record in records.items()]


def read_record(root: Path, slug: str) -> dict | None:
    """The record of chapter `slug`, or None when it has none."""
    path = record_path(root, slug)
    if not path.exists():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


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
        from .claims import PlainText, glue_quietly, outcome

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
