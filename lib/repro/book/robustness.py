"""The robustness page (chapters/appendix/robustness.md) and each chapter's line about its seeds, generated from the
shipped seed records `data/<slug>/seeds-run.json` (written by `python -m repro.book seeds … --record`, see
`repro.book.seeds`); the build puts them in its report as `report["seed_runs"]`.

A claim is *fragile* when its verdict is not the same at every seed of its record: it is listed first, since a
verdict that turns with the seed is not yet a finding (DESIGN.md §4).
"""
from __future__ import annotations

import statistics

from ..common.tables import markdown_table, table_cell
from .verdicts import UNTESTABLE, expected_outcome, format_value, outcome


def _numbers(claim: dict) -> list[float]:
    values = [v for v in claim["observed"].values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return [float(v) for v in values if v == v]  # NaN dropped


def spread(claim: dict) -> str:
    """'min / median / max' of a claim's observed values over its seeds ('n/a' when none is a number)."""
    values = _numbers(claim)
    if not values:
        return "n/a"
    return " / ".join(format_value(v) for v in (min(values), statistics.median(values), max(values)))


def anchor(slug: str) -> str:
    """The label of a chapter's section on the robustness page."""
    return f"robustness-{slug}"


def _held(claim: dict, record: dict) -> str:
    n = len(record["seeds"])
    untestable = claim.get("untestable_at", 0)
    return f"{claim['held']} of {n}" + (f" ({untestable} untestable)" if untestable else "")


def _expected(claim: dict) -> str:
    return {"held": "holds", "not held": "does not hold (declared)",
            UNTESTABLE: "is untestable here (declared)"}[expected_outcome(claim["expect"])]


def _failed_at(claim: dict, record: dict) -> str:
    wanted = expected_outcome(claim["expect"])
    off = [str(s) for s in record["seeds"]
           if str(s) not in claim["holds"] or outcome(claim["holds"][str(s)]) != wanted]
    return ", ".join(off) or "—"


def _row(slug: str, claim: dict, record: dict, with_chapter: bool) -> list[str]:
    first = [f"{{ref}}`{slug} <{anchor(slug)}>`"] if with_chapter else []
    kind = record.get("kinds_now", {}).get(claim["id"], claim["kind"])
    return first + [f"`{claim['id']}`", kind, table_cell(claim["says"]), _held(claim, record), _expected(claim),
                    "yes" if claim["as_expected"] else "**no**", _failed_at(claim, record), spread(claim)]


HEADER = ["claim", "kind", "statement", "held at", "the chapter expects it to", "as expected at every seed",
          "seeds off", "observed min / median / max"]


def _record_line(slug: str, record: dict) -> str:
    minutes = sum(r["seconds"] or 0 for r in record["runs"]) / 60
    seeds = ", ".join(map(str, record["seeds"]))
    why = f" Only these seeds: {record['why'].rstrip('.')}." if record.get("why") else ""
    return (f"Seeds {seeds} at `scale=\"{record['scale']}\"`, from commit `{record['commit'][:10]}` on "
            f"{record['date'][:10]} ({minutes:.1f} notebook-minutes on {record.get('machine', 'an unnamed machine')}, "
            f"{record.get('executor', 'local')} executor).{why}")


def _with_current_kinds(records: dict, report: dict) -> dict:
    """The records, each with `kinds_now`: its claims' kinds as the chapter labels them in this build (a claim
    relabelled since its record was made, say from `paper` to `ours`, is shown under its label of today)."""
    kinds = {}
    for nb in report.get("notebooks", []):
        kinds.setdefault(nb["chapter"], {}).update({c["id"]: c.get("kind", "paper") for c in nb.get("claims", [])})
    return {slug: {**r, "kinds_now": kinds.get(slug, {})} for slug, r in records.items()}


def robustness_page(report: dict) -> str:
    """The page's generated part: fragile claims first, then every swept chapter's claims, then those not swept."""
    records = _with_current_kinds(report.get("seed_runs") or {}, report)
    chapters = list(dict.fromkeys(nb["chapter"] for nb in report.get("notebooks", [])))
    if not records:
        return "No chapter has a seed record yet (`data/<slug>/seeds-run.json`)."
    fragile = [(slug, c) for slug, r in records.items() for c in r["claims"] if c["fragile"] or not c["as_expected"]]
    out = ["## Fragile claims", ""]
    if fragile:
        out += ["Verdicts that change with the seed, or that differ from what the chapter declares at some seed.", "",
                markdown_table(["chapter", *HEADER],
                               [_row(slug, c, records[slug], with_chapter=True) for slug, c in fragile])]
    else:
        out.append("None: every recorded claim has the same verdict at every seed of its chapter's record.")
    total = sum(len(r["claims"]) for r in records.values())
    out += ["", f"{len(fragile)} of {total} recorded claims in {len(records)} chapters are listed here.", "",
            "## Every swept claim, by chapter", ""]
    for slug, record in records.items():
        out += [f"({anchor(slug)})=", f"### {slug}", "", _record_line(slug, record) + f" Chapter: "
                f"{{doc}}`{slug} </chapters/{slug}/index>`.", "",
                markdown_table(HEADER, [_row(slug, c, record, with_chapter=False) for c in record["claims"]]), ""]
    unswept = [s for s in chapters if s not in records]
    if unswept:
        out += ["## Chapters without a seed record", "",
                "These chapters have not been swept yet: their claims are checked at the build's seed only. "
                "`python -m repro.book seeds --seeds 0-9 --only SLUG --record` makes the record.", "",
                ", ".join(f"{{doc}}`{s} </chapters/{s}/index>`" for s in unswept) + "."]
    return "\n".join(out)


def chapter_seed_line(report: dict, slug: str) -> str:
    """One sentence for a chapter's claim table: how its claims fared across the seeds of its record, linked."""
    record = (report.get("seed_runs") or {}).get(slug)
    if not record:
        return (f"This chapter has no seed record yet (`data/{slug}/seeds-run.json`): its claims are checked at the "
                "build's seed only.")
    n, claims = len(record["seeds"]), record["claims"]
    steady = sum(c["as_expected"] for c in claims)
    fragile = [c["id"] for c in claims if c["fragile"]]
    tail = f"; fragile: {', '.join(f'`{c}`' for c in fragile)}" if fragile else ""
    return (f"Across {n} seeds ({', '.join(map(str, record['seeds']))}, commit `{record['commit'][:10]}`), "
            f"{steady} of {len(claims)} claims had the verdict the chapter expects at every seed{tail}: "
            f"{{ref}}`the rows of the robustness appendix <{anchor(slug)}>`.")
