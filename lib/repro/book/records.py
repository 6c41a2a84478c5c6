"""The book's records of runs (DESIGN.md §4, §5), both kinds, under one writer policy (`check_recordable`: nothing
failed, and the code that ran is a commit; `write_json_record`):

- `data/<slug>/full-run.json`, a chapter's full-scale run: `python -m repro.book build --scale full --only SLUG
  --record` writes one per chapter it ran: the commit, the date, the machine, the seconds of each notebook, every
  claim's record and every number its notebooks glued (`make_record`, `write_records`). At `scale="ci"` a chapter
  reads it with `repro.book.full_run.FullRun`, so that what its prose says about full scale comes from a run that
  left evidence.
- `data/<slug>/seeds-run.json`, a seed sweep (`python -m repro.book seeds … --record`, see `repro.book.seeds`):
  each claim's verdict and observed value at every seed (`write_seed_records`, `read_seed_records`).
- The claim records a notebook appends while it runs (JSON lines, `read_records`), which the build gathers.

A book test fails when a chapter has no record, or when a record names a claim the chapter no longer checks (the
record is stale: rerun it). How to read the records is explained on chapters/appendix/reproducibility.md.
"""
from __future__ import annotations

import json
import os
import platform
import re
from datetime import datetime, timezone
from pathlib import Path

from ..common.provenance import git_output
from .toc import notebooks

RECORD_NAME = "full-run.json"
#: Where a record lives, relative to the book's root.
RECORD_PATH = "data/{slug}/" + RECORD_NAME


def record_path(root: Path, slug: str) -> Path:
    """The record file of chapter `slug` under the book root `root`."""
    return Path(root) / RECORD_PATH.format(slug=slug)


def rerun_command(slug: str) -> str:
    """The command that makes (or remakes) the record of chapter `slug`."""
    return f"python -m repro.book build --scale full --only {slug} --record"


def commit_of(root: Path) -> tuple[str, bool]:
    """The commit checked out at `root` and whether the chapters or the library differ from it."""
    commit = git_output("rev-parse", "HEAD", cwd=root)
    dirty = bool(git_output("status", "--porcelain", "--", "lib", "chapters", "requirements.lock", "data",
                            ":(exclude)data/*/" + RECORD_NAME, ":(exclude)data/*/" + SEEDS_RECORD, cwd=root))
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


def read_records(path) -> list[dict]:
    """The claim records a notebook wrote (JSON lines); [] when it wrote none."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


SEEDS_RECORD = "seeds-run.json"


def seeds_record_path(root: Path, slug: str) -> Path:
    """`data/<slug>/seeds-run.json` under the book root."""
    return Path(root) / "data" / slug / SEEDS_RECORD


def read_seed_records(root: Path) -> dict:
    """Every chapter's shipped seed record, {slug: record}, in the book's order (chapters without one left out)."""
    out = {}
    for slug in dict.fromkeys(p.chapter for p in notebooks(root)):
        path = seeds_record_path(root, slug)
        if path.exists():
            out[slug] = json.loads(path.read_text(encoding="utf-8"))
    return out


def failed_runs(result: dict) -> list[str]:
    """'path at seed k: error' for every notebook run of a seed sweep's result that failed."""
    return [f"{r['path']} at seed {r['seed']}: {r['error']}" for ch in result["chapters"].values() for r in ch["runs"]
            if r["status"] == "failed"]


def write_seed_records(result: dict, root: Path) -> list[Path]:
    """`data/<slug>/seeds-run.json` for every chapter of the sweep; ValueError (nothing written) when a run failed
    or the code that ran is not a commit."""
    commit = check_recordable(failed_runs(result), root)
    env = result["environment"]
    date = datetime.now(timezone.utc).isoformat(timespec="seconds")
    written = []
    for slug, chapter in result["chapters"].items():
        record = {"chapter": slug, "commit": commit, "date": date, "scale": result["scale"],
                  "device": result["device"], "executor": result["executor"],
                  "machine": f"{env.get('machine', '?')}, {env.get('cores', '?')} cores",
                  "command": f"python -m repro.book seeds --seeds {_spec(chapter['seeds'])} --only {slug} "
                             f"--scale {result['scale']} --record", **chapter}
        written.append(write_json_record(seeds_record_path(root, slug), record))
    return written


def _spec(seeds: list[int]) -> str:
    """The shortest --seeds text for a list: 0-9 for a run of seeds, else a comma list."""
    if seeds and seeds == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 2:
        return f"{seeds[0]}-{seeds[-1]}"
    return ",".join(map(str, seeds))
