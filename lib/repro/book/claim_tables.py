"""Claim tables: the markdown a notebook shows under its claims and the pages that list them (the chapter's claims,
the scoreboard) are made here from claim records (dicts as stored in report.json and in the records under data/).

Explained in chapters/appendix/reproducibility.md.
"""
from __future__ import annotations

from ..common.tables import markdown_table, table_cell
from .verdicts import KIND_TITLES, KINDS, LEGEND, format_observed, format_test, verdict_mark

def claims_markdown(records, full_record: dict | None = None) -> str:
    """Markdown tables of claim records (dicts as stored in report.json), one per kind, in the order of KINDS.

    With `full_record` (a chapter's data/<slug>/full-run.json, see repro.book.records) each row also shows the value
    and verdict of that recorded full-scale run, and claims checked at full scale only get rows of their own.
    """
    records = list(records)
    full = {c["id"]: c for c in (full_record or {}).get("claims", [])}
    seen = {c["id"] for c in records}
    records += [{**c, "not_at_ci": True} for c in full.values() if c["id"] not in seen]
    with_full = full_record is not None
    missing = "not in the record" if full_record and full_record.get("commit") else "no record"
    header = ["claim", "statement", "paper", "test", "ours at ci", "full run"] if with_full else \
        ["claim", "statement", "paper", "test", "ours"]
    parts = []
    for kind in KINDS:
        rows = [_row(c, full, with_full, missing) for c in records if c.get("kind", "paper") == kind]
        if rows:
            parts.append(f"**{KIND_TITLES[kind]}**\n\n" + markdown_table(header, rows))
    return "\n\n".join(parts) + ("\n\n" + LEGEND if parts else "")


def result_cell(c: dict | None, missing: str = "—") -> str:
    """A claim's observed value and its verdict mark, or `missing` when it did not run there."""
    if not c or c.get("not_at_ci"):
        return missing
    cell = f"{format_observed(c['observed'], c.get('interval'))} {verdict_mark(c['holds'], c.get('expect', True))}"
    return cell + (f" ({c['untestable']})" if c.get("holds") is None and c.get("untestable") else "")


def paper_cell(c: dict) -> str:
    """What the paper says (its number or direction) and where it was read, for a table cell."""
    paper, source = str(c.get("paper") or "").strip(), str(c.get("source") or "").strip()
    text = f"{paper} ({source})" if paper and source and source not in paper else paper or source
    return table_cell(text or "—")


def _row(c: dict, full: dict, with_full: bool, missing: str) -> list[str]:
    row = [f"`{c['id']}`", table_cell(c["says"]), paper_cell(c), format_test(c["op"], c["threshold"]),
           result_cell(c, "— (full scale only)")]
    return row + [result_cell(full.get(c["id"]), f"— ({missing})")] if with_full else row
