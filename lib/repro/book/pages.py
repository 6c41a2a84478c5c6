"""Generated content (DESIGN.md §2, step 3): the scoreboard, the status page and each chapter's claim table.

Pages hold markers that the stage step replaces with markdown made from the build report:
`<!-- repro:claims SLUG -->` (a chapter's claims by kind, at ci and in its full-run record, in its index.md),
`<!-- repro:scoreboard -->` (the counts per chapter, on the front page), `<!-- repro:scoreboard-full -->` (the counts
and every claim of the book, on the scoreboard appendix), `<!-- repro:status -->` (run times and environment) and
`<!-- repro:course -->` (the course guide's tables, from `report["course"]`, see `repro.book.course`) and
`<!-- repro:robustness -->` (every claim across the seeds of the shipped seed records, see `repro.book.robustness`) and
`<!-- repro:authors-code -->` (the runs of the authors' released code on our data, see `repro.book.authors`).
"""
from __future__ import annotations

import re
from collections import defaultdict

from ..common.tables import markdown_table, table_cell
from .authors import authors_code_page
from .claim_tables import claims_markdown, paper_cell, result_cell
from .course import suggested_order
from .robustness import chapter_seed_line, robustness_page
from .verdicts import KIND_TITLES, KINDS, LEGEND, as_expected, format_test

MARKER = re.compile(r"^<!--[ \t]*repro:(claims|scoreboard-full|scoreboard|status|course|robustness|authors-code)(?:[ \t]+([\w-]+))?[ \t]*-->[ \t]*$",
                    re.M)
CHAPTER_BUDGET_S = 90


def _by_chapter(report: dict) -> dict[str, list[dict]]:
    chapters = defaultdict(list)
    for nb in report.get("notebooks", []):
        chapters[nb["chapter"]].append(nb)
    return dict(chapters)


def _records(notebooks: list[dict]) -> list[dict]:
    return [c for nb in notebooks for c in nb.get("claims", [])]


def _full_record(report: dict, slug: str) -> dict | None:
    return (report.get("full_runs") or {}).get(slug)


def record_line(record: dict | None, slug: str) -> str:
    """One sentence naming a chapter's full-run record (commit, date, minutes), or saying it has none."""
    if not record:
        return (f"This chapter has no recorded full-scale run yet (`data/{slug}/full-run.json`): nothing is stated "
                "about full scale.")
    minutes = sum(nb["seconds"] for nb in record["notebooks"]) / 60
    return (f"The full-run columns come from `data/{slug}/full-run.json`: commit `{record['commit'][:10]}`, "
            f"{record['date'][:10]}, {minutes:.1f} minutes on {record.get('machine', 'an unnamed machine')}.")


def chapter_claims(report: dict, slug: str) -> str:
    """The claim table of one chapter, for its index.md: grouped by kind, ci beside the recorded full run."""
    notebooks = _by_chapter(report).get(slug, [])
    records = _records(notebooks)
    if not records:
        return ("```{note}\nNo claims were recorded for this chapter in this build: its notebooks have not run "
                "(see the status page).\n```")
    failed = [nb["path"] for nb in notebooks if nb["status"] == "failed"]
    note = f"\n\n```{{warning}}\nThese notebooks failed in this build: {', '.join(failed)}.\n```" if failed else ""
    full = _full_record(report, slug)
    return (claims_markdown(records, full_record=full or {"claims": []})
            + f"\n\nChecked at `scale=\"{report['scale']}\"` in this build. {record_line(full, slug)}"
            + f"\n\n{chapter_seed_line(report, slug)}" + note)


def _count(records, kind) -> str:
    """'held / stated' among the claims of one kind ('held / stated, k untestable' when some were untestable)."""
    mine = [c for c in records if c.get("kind", "paper") == kind]
    untestable = sum(c["holds"] is None for c in mine)
    return f"{sum(c['holds'] is True for c in mine)} / {len(mine)}" + (f", {untestable} ○" if untestable else "")


def paper_verdicts(records) -> dict[str, int]:
    """How many of the paper's claims were reproduced, not reproduced, and untestable here."""
    paper = [c for c in records if c.get("kind", "paper") == "paper"]
    return {"reproduced": sum(c["holds"] is True for c in paper), "not reproduced": sum(c["holds"] is False for c in paper),
            "untestable": sum(c["holds"] is None for c in paper)}


def _paper_cell(records) -> str:
    n = paper_verdicts(records)
    return f"{n['reproduced']} / {n['not reproduced']} / {n['untestable']}"


def _summary_row(slug: str, nbs: list[dict], full: dict | None) -> list[str]:
    records = _records(nbs)
    kinds_now = {c["id"]: c.get("kind", "paper") for c in records}   # a record keeps the kinds it was made with
    full_paper = (_paper_cell({**c, "kind": kinds_now.get(c["id"], c.get("kind", "paper"))} for c in full["claims"])
                  if full else "no record")
    ok = all(as_expected(c) for c in records) and all(nb["status"] != "failed" for nb in nbs)
    return [_link(slug), _paper_cell(records), full_paper, _count(records, "ours"), _count(records, "check"),
            "yes" if ok else "**no**"]


def headline(report: dict) -> str:
    """One sentence: the paper's claims of the whole book by verdict, at the build's scale."""
    n = paper_verdicts(c for nbs in _by_chapter(report).values() for c in _records(nbs))
    untestable = f"{n['untestable']} {'was' if n['untestable'] == 1 else 'were'} untestable here"
    return (f"Of the paper's claims checked at `scale=\"{report['scale']}\"` in this build, **{n['reproduced']} "
            f"reproduced**, **{n['not reproduced']} did not reproduce** and **{untestable}** (a precondition of the "
            "test failed in our miniature, or the value was undefined: a defect of the miniature, not a finding "
            "about the paper).")


def scoreboard(report: dict, full: bool = False) -> str:
    """Every chapter's claims counted by kind (short), and with `full=True` every claim of the book, by kind."""
    chapters = _by_chapter(report)
    if not chapters:
        return "No chapter has run in this build yet."
    lines = [headline(report), "",
             f"Claims checked at `scale=\"{report['scale']}\"` in the build of this page, and in each chapter's "
             "recorded full-scale run. Only the paper's claims count as reproduced or not; our own marks and the "
             "checks (true by construction) are counted apart; ○ counts the untestable ones.", "",
             markdown_table(["chapter", "paper's claims reproduced / not / untestable at ci", "… in the full record",
                             "our marks held / stated", "checks passed / run", "every verdict as the chapter expects"],
                            [_summary_row(slug, nbs, _full_record(report, slug)) for slug, nbs in chapters.items()])]
    if full:
        lines += ["", every_claim(report)]
    return "\n".join(lines)


def _board_row(slug: str, ci: dict | None, full: dict | None, has_record: bool) -> list[str]:
    c = ci or full
    missing = "— (not in the record)" if has_record else "— (no record)"
    return [slug, f"`{c['id']}`", table_cell(c["says"]), paper_cell(c), format_test(c["op"], c["threshold"]),
            result_cell(ci, "— (full scale only)"), result_cell(full, missing)]


def every_claim(report: dict) -> str:
    """One table per kind listing every claim of the book: chapter, statement, paper's number, ci, full record."""
    parts = []
    for kind in KINDS:
        rows = []
        for slug, nbs in _by_chapter(report).items():
            full = {c["id"]: c for c in (_full_record(report, slug) or {}).get("claims", [])}
            at_ci = {c["id"]: c for c in _records(nbs)}
            for claim_id, c in {**full, **at_ci}.items():
                if c.get("kind", "paper") == kind:
                    rows.append(_board_row(slug, at_ci.get(claim_id), full.get(claim_id), bool(full)))
        if rows:
            parts.append(f"## {KIND_TITLES[kind]}\n\n" + markdown_table(
                ["chapter", "claim", "statement", "paper (where read)", "test", "ours at ci", "full run"], rows))
    return "\n\n".join(parts) + ("\n\n" + LEGEND if parts else "")


def status(report: dict) -> str:
    """Seconds per notebook and chapter, scale, package versions and machine."""
    env = report.get("environment", {})
    lines = [f"Built at `scale=\"{report['scale']}\"`, `seed={report.get('seed', 0)}`, "
             f"`device=\"{report.get('device', 'cpu')}\"`, with `--jobs {report.get('jobs', 1)}`.", "",
             "Seconds are those of the notebook's last execution (a cached notebook keeps the time it took when it "
             "ran), kernel start and imports included.", ""]
    totals = defaultdict(float)
    for nb in report.get("notebooks", []):
        totals[nb["chapter"]] += nb["seconds"] or 0
    lines.append(markdown_table(["notebook", "status", "seconds"],
                                [[f"`{nb['path']}`", nb["status"] + (f" — {nb['error']}" if nb.get("error") else ""),
                                  f"{nb['seconds']:.1f}"] for nb in report.get("notebooks", [])]))
    budget = [[slug, f"{seconds:.1f}", ("yes" if seconds <= CHAPTER_BUDGET_S else "**no**")
               if report["scale"] == "ci" else "n/a at full"] for slug, seconds in totals.items()]
    lines += ["", "## Chapters against the budget", "",
              f"At `scale=\"ci\"` a chapter must run in at most {CHAPTER_BUDGET_S} s on 2 cores.", "",
              markdown_table(["chapter", "seconds", "within budget"], budget),
              "", "## Machine and packages", "",
              markdown_table(["", "version or value"], [[key, f"`{value}`"] for key, value in env.items()])]
    return "\n".join(lines)


SEMESTER_WEEKS = 14


def _link(slug: str) -> str:
    return f"{{doc}}`{slug} </chapters/{slug}/index>`"


def _cost_row(f: dict, seconds: dict, claims: dict) -> list:
    ran = f"{seconds[f['slug']]:.0f}" if f["slug"] in seconds else "—"
    shared = ", ".join(f"`repro.{m}`" for m in f["substrate"]) or "—"
    return [_link(f["slug"]), f["words"], f["read_minutes"], ran, f["exercises"], claims.get(f["slug"], "—"), shared]


def course_guide(report: dict) -> str:
    """The course guide (chapters/appendix/course.md): what each chapter asks of a student, what it costs to read,
    run and practise, the substrate it shares, and a teaching order for a semester of SEMESTER_WEEKS weeks."""
    facts = report.get("course") or []
    if not facts:
        return "No chapter's course facts were collected in this build."
    seconds = defaultdict(float)
    for nb in report.get("notebooks", []):
        seconds[nb["chapter"]] += nb["seconds"] or 0
    claims = {slug: len(_records(nbs)) for slug, nbs in _by_chapter(report).items()}
    by_slug = {f["slug"]: f for f in facts}
    ask = ["## What each chapter asks of a student", "",
           markdown_table(["chapter", "level", "prerequisites", "read first"],
                          [[_link(f["slug"]), f["level"], table_cell(f["prerequisites"]),
                            ", ".join(_link(b) for b in f["builds_on"]) or "—"] for f in facts])]
    run = f" at `scale=\"{report['scale']}\"`"
    cost = ["## What it takes to read, run and practise", "",
            f"Reading time counts the prose of every page (code excluded) at 200 words a minute; run time is the "
            f"chapter's notebooks{run} in the build of this page (kernel start included), on the machine named on the "
            "status page; exercises are counted from the sources.", "",
            markdown_table(["chapter", "words", "read (min)", "run (s)", "exercises", "claims", "shared substrate"],
                           [_cost_row(f, seconds, claims) for f in facts])]
    order = suggested_order(facts)
    weeks = ["## A one-semester course", "",
             f"One chapter a week over {SEMESTER_WEEKS} weeks, the first spent on the front page and the "
             "{doc}`reproducibility appendix </chapters/appendix/reproducibility>` (what a claim is and how the book "
             "checks it). The order puts every chapter after those it builds on, and otherwise the easier levels "
             "first, in the book's order; it is generated from the chapters' front matter, so a teacher who "
             "reorders should keep the \"read first\" column above.", "",
             "1. Week 1: how the book works."]
    for i, slug in enumerate(order[:SEMESTER_WEEKS - 1], start=2):
        f = by_slug[slug]
        weeks.append(f"{i}. Week {i}: {_link(slug)} ({f['level']}; {f['read_minutes']} min to read, "
                     f"{f['exercises']} exercises)")
    if len(order) > SEMESTER_WEEKS - 1:
        weeks += ["", "For projects or a second term: " + ", ".join(_link(s) for s in order[SEMESTER_WEEKS - 1:]) + "."]
    return "\n".join(ask + [""] + cost + [""] + weeks)


def fill_markers(text: str, report: dict) -> str:
    """Replace every repro marker in a page's text with its generated markdown."""

    def generate(kind: str, arg: str) -> str:
        if kind == "claims":
            return chapter_claims(report, arg)
        if kind == "scoreboard":
            return scoreboard(report)
        if kind == "scoreboard-full":
            return scoreboard(report, full=True)
        if kind == "course":
            return course_guide(report)
        if kind == "robustness":
            return robustness_page(report)
        if kind == "authors-code":
            return authors_code_page(report)
        return status(report)

    def replace(match):  # blank lines around, so a table never swallows the paragraph after it
        return "\n" + generate(match.group(1), match.group(2) or "") + "\n"

    return MARKER.sub(replace, text)
