"""Generated content (DESIGN.md §2, step 3): the scoreboard, the status page and each chapter's claim table.

Pages hold markers that the stage step replaces with markdown made from the build report:
`<!-- repro:claims SLUG -->` (a chapter's claims, in its index.md), `<!-- repro:scoreboard -->` (every chapter's
claims, on the front page and the scoreboard appendix) and `<!-- repro:status -->` (run times and environment).
"""
from __future__ import annotations

import re
from collections import defaultdict

from .claims import claims_markdown

MARKER = re.compile(r"^<!--[ \t]*repro:(claims|scoreboard|scoreboard-full|status)[ \t]*([\w-]*)[ \t]*-->[ \t]*$", re.M)
CHAPTER_BUDGET_S = 90


def _by_chapter(report: dict) -> dict[str, list[dict]]:
    chapters = defaultdict(list)
    for nb in report.get("notebooks", []):
        chapters[nb["chapter"]].append(nb)
    return dict(chapters)


def chapter_claims(report: dict, slug: str) -> str:
    """The claim table of one chapter, for its index.md."""
    notebooks = _by_chapter(report).get(slug, [])
    records = [c for nb in notebooks for c in nb.get("claims", [])]
    if not records:
        return ("```{note}\nNo claims were recorded for this chapter in this build: its notebooks have not run "
                "(see the status page).\n```")
    failed = [nb["path"] for nb in notebooks if nb["status"] == "failed"]
    note = f"\n\n```{{warning}}\nThese notebooks failed in this build: {', '.join(failed)}.\n```" if failed else ""
    return claims_markdown(records) + f"\n\nChecked at `scale=\"{report['scale']}\"`." + note


def _held(records):
    return sum(c["holds"] for c in records), len(records), sum(not c.get("expect", True) for c in records)


def scoreboard(report: dict, full: bool = False) -> str:
    """Every chapter's claims: held / stated (short), or with each claim's numbers (`full=True`)."""
    chapters = _by_chapter(report)
    if not chapters:
        return "No chapter has run in this build yet."
    lines = [f"Claims checked at `scale=\"{report['scale']}\"` in the build of this page.", "",
             "| chapter | claims held / stated | expected not to reproduce | as the chapter expects |",
             "|---|---|---|---|"]
    for slug, nbs in chapters.items():
        records = [c for nb in nbs for c in nb.get("claims", [])]
        held, stated, not_expected = _held(records)
        ok = all(c["holds"] == c.get("expect", True) for c in records) and all(nb["status"] != "failed" for nb in nbs)
        lines.append(f"| {{doc}}`{slug} </chapters/{slug}/index>` | {held} / {stated} | {not_expected} | "
                     f"{'yes' if ok else '**no**'} |")
    if full:
        for slug, nbs in chapters.items():
            lines += ["", f"## {slug}", "", chapter_claims(report, slug)]
    return "\n".join(lines)


def status(report: dict) -> str:
    """Seconds per notebook and chapter, scale, package versions and machine."""
    env = report.get("environment", {})
    lines = [f"Built at `scale=\"{report['scale']}\"`, `seed={report.get('seed', 0)}`, "
             f"`device=\"{report.get('device', 'cpu')}\"`, with `--jobs {report.get('jobs', 1)}`.", "",
             "Seconds are those of the notebook's last execution (a cached notebook keeps the time it took when it "
             "ran), kernel start and imports included.", "",
             "| notebook | status | seconds |", "|---|---|---|"]
    totals = defaultdict(float)
    for nb in report.get("notebooks", []):
        totals[nb["chapter"]] += nb["seconds"] or 0
        error = f" — {nb['error']}" if nb.get("error") else ""
        lines.append(f"| `{nb['path']}` | {nb['status']}{error} | {nb['seconds']:.1f} |")
    lines += ["", "## Chapters against the budget", "",
              f"At `scale=\"ci\"` a chapter must run in at most {CHAPTER_BUDGET_S} s on 2 cores.", "",
              "| chapter | seconds | within budget |", "|---|---|---|"]
    for slug, seconds in totals.items():
        within = "yes" if seconds <= CHAPTER_BUDGET_S else "**no**"
        lines.append(f"| {slug} | {seconds:.1f} | {within if report['scale'] == 'ci' else 'n/a at full'} |")
    lines += ["", "## Machine and packages", "", "| | version or value |", "|---|---|"]
    for key, value in env.items():
        lines.append(f"| {key} | `{value}` |")
    return "\n".join(lines)


def fill_markers(text: str, report: dict) -> str:
    """Replace every repro marker in a page's text with its generated markdown."""

    def generate(kind: str, arg: str) -> str:
        if kind == "claims":
            return chapter_claims(report, arg)
        if kind == "scoreboard":
            return scoreboard(report)
        if kind == "scoreboard-full":
            return scoreboard(report, full=True)
        return status(report)

    def replace(match):  # blank lines around, so a table never swallows the paragraph after it
        return "\n" + generate(match.group(1), match.group(2)) + "\n"

    return MARKER.sub(replace, text)
