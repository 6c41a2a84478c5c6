"""Records of the authors' released code run on our data (DESIGN.md §4, "the authors' code as the first peer"):
`data/<slug>/authors-code.json`, and the appendix page made from them (chapters/appendix/authors-code.md).

A record is written by hand *after* a run of the authors' repository in its own environment, outside the book's
build, and says exactly what ran, so a reader can repeat it:

    {"chapter": "specgd", "repository": "https://github.com/OWNER/NAME", "commit": "<40 hex digits>",
     "command": "python train.py --config ours.yaml", "environment": "python 3.11, torch 2.5 (their requirements.txt)",
     "date": "2026-12-07", "data": "our long-tailed digits (repro.specgd.data), exported with …",
     "rows": [{"quantity": "early balanced accuracy gap", "theirs": 0.31, "ours": 0.30, "note": "…"}],
     "agreement": "one paragraph: where the two agree and where not"}

The build reads every record into `report["authors_code"]`; a record missing a field stops the build with the field
named. The page is generated, like the robustness page, from the `<!-- repro:authors-code -->` marker.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from ..common.tables import markdown_table, table_cell
from .verdicts import format_value
from .toc import notebooks

AUTHORS_RECORD = "authors-code.json"
FIELDS = ("chapter", "repository", "commit", "command", "environment", "date", "data", "rows", "agreement")
ROW_FIELDS = ("quantity", "theirs", "ours")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def authors_record_path(root: Path, slug: str) -> Path:
    """`data/<slug>/authors-code.json` under the book root."""
    return Path(root) / "data" / slug / AUTHORS_RECORD


def check_authors_record(record: dict, where: str) -> dict:
    """The record, if it has every field of the format in the module docstring; else ValueError naming what lacks."""
    missing = [f for f in FIELDS if f not in record]
    if missing:
        raise ValueError(f"{where}: missing {', '.join(missing)} (the format is in lib/repro/book/authors.py)")
    if not _COMMIT.match(str(record["commit"])):
        raise ValueError(f"{where}: commit must be the 40-hex-digit commit of the authors' repository that ran")
    if not isinstance(record["rows"], list) or not record["rows"]:
        raise ValueError(f"{where}: rows must list the numbers side by side (quantity, theirs, ours)")
    for i, row in enumerate(record["rows"]):
        lacks = [f for f in ROW_FIELDS if f not in row]
        if lacks:
            raise ValueError(f"{where}: row {i} lacks {', '.join(lacks)}")
    return record


def read_authors_records(root: Path) -> dict:
    """Every chapter's authors'-code record, {slug: record}, in the book's order (chapters without one left out)."""
    out = {}
    for slug in dict.fromkeys(p.chapter for p in notebooks(root)):
        path = authors_record_path(root, slug)
        if path.exists():
            where = path.relative_to(root).as_posix()
            out[slug] = check_authors_record(json.loads(path.read_text(encoding="utf-8")), where)
    return out


def _cell(value) -> str:
    return format_value(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def _chapter_section(slug: str, record: dict) -> list[str]:
    out = [f"## {slug}", "",
           f"{{doc}}`The chapter </chapters/{slug}/index>`. Repository {record['repository']} at commit "
           f"`{record['commit'][:10]}`, run on {record['date']} with `{record['command']}` "
           f"({table_cell(record['environment'])}). Data: {table_cell(record['data'])}.", "",
           markdown_table(["quantity", "the authors' code", "ours", "note"],
                          [[r["quantity"], _cell(r["theirs"]), _cell(r["ours"]), r.get("note", "") or "—"]
                           for r in record["rows"]])]
    return out + ["", str(record["agreement"]), ""]


def _record_cell(record: dict | None) -> str:
    if record is None:
        return "no record yet (not released, or the run is still to be made: the chapter's *what differs* says which)"
    return f"[{record['repository']}]({record['repository']}) at `{record['commit'][:10]}`, {record['date']}: see below"


def authors_code_page(report: dict) -> str:
    """The page's generated part: a table of every chapter and its record, then one section per record."""
    records = report.get("authors_code") or {}
    chapters = list(dict.fromkeys(nb["chapter"] for nb in report.get("notebooks", [])))
    out = [markdown_table(["chapter", "the authors' code run on our data"],
                          [[f"{{doc}}`{slug} </chapters/{slug}/index>`", _record_cell(records.get(slug))]
                           for slug in chapters])]
    if not records:
        out += ["", "No chapter has a record of the authors' code run on our data yet (`data/<slug>/authors-code.json`)."]
    for slug, record in records.items():
        out += [""] + _chapter_section(slug, record)
    return "\n".join(out)
