"""The claim ledger (DESIGN.md §4): a paper's falsifiable statements, checked on our run.

    ledger = Ledger("specgd")
    ledger.check("spec-beats-gd", observed=gap, at_least=0.15, paper="+0.30",
                 says="SpecGD's early balanced accuracy beats GD's")

Each check shows a held / not-held row in the notebook and, inside the build, appends a JSON record to the file named
by `REPRO_CLAIMS_FILE`; the build gathers those records into `_build/report.json`, the scoreboard and each chapter's
claim table. A claim that the chapter knows does not reproduce is declared with `expect=False`: the tests then require
it *not* to hold, and the chapter explains why. How to read claims is told in chapters/intro.md.
"""
from __future__ import annotations

import json
import math
import os
import re
from dataclasses import asdict, dataclass, field

_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
OPS = {"at_least": "≥", "at_most": "≤", "between": "in"}


@dataclass
class Claim:
    """One checked claim; `to_json()` gives the record the build stores."""

    id: str
    says: str
    observed: float | None
    op: str
    threshold: float | list
    paper: str
    holds: bool
    expect: bool
    chapter: str = ""
    notebook: str = field(default_factory=lambda: os.environ.get("REPRO_NOTEBOOK", ""))

    def to_json(self) -> dict:
        return asdict(self)

    @property
    def as_expected(self) -> bool:
        return self.holds == self.expect

    def passes(self, observed) -> bool:
        """Whether another observation (another seed's, say) passes this claim's test; NaN never does."""
        limits = {op: self.threshold if op == self.op else None for op in OPS}
        return _decide(_as_number("observed", observed), **limits)[2]


def format_value(x) -> str:
    """A number as the book prints it: four significant digits, `n/a` for a missing value."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.4g}"


def format_test(op: str, threshold) -> str:
    """The test a claim applies, e.g. `≥ 0.15` or `in [-2.5, -1.5]`."""
    if op == "between":
        lo, hi = threshold
        return f"in [{format_value(lo)}, {format_value(hi)}]"
    return f"{OPS[op]} {format_value(threshold)}"


def verdict(holds: bool, expect: bool) -> str:
    """Held / not held, and whether that is what the chapter expects."""
    if holds:
        return "✓ held" if expect else "✓ held (the chapter expects not)"
    return "✗ not held (as expected: not reproduced)" if not expect else "✗ not held"


def _as_number(name, value) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None
    return number


def _decide(observed: float, at_least, at_most, between):
    given = [(op, v) for op, v in (("at_least", at_least), ("at_most", at_most), ("between", between)) if v is not None]
    if len(given) != 1:
        raise ValueError("give exactly one of at_least=, at_most=, between=(lo, hi)")
    op, value = given[0]
    if op == "between":
        if len(value) != 2:
            raise ValueError(f"between must be a pair (lo, hi), got {value!r}")
        lo, hi = (_as_number("between", v) for v in value)
        if lo > hi:
            raise ValueError(f"between=({lo}, {hi}) has lo > hi")
        threshold = [lo, hi]
        holds = lo <= observed <= hi
    else:
        threshold = _as_number(op, value)
        holds = observed >= threshold if op == "at_least" else observed <= threshold
    return op, threshold, bool(holds and not math.isnan(observed))


class Ledger:
    """The claims of one notebook of chapter `chapter` (its folder name under chapters/)."""

    def __init__(self, chapter: str):
        if not isinstance(chapter, str) or not _ID.match(chapter):
            raise ValueError(f"chapter must be a chapter slug like 'specgd', got {chapter!r}")
        self.chapter = chapter
        self.claims: list[Claim] = []

    def check(self, id: str, observed, *, says: str, at_least=None, at_most=None, between=None,
              paper: str = "", expect: bool = True) -> None:
        """Check `observed` against exactly one of `at_least`, `at_most`, `between=(lo, hi)`; show and record it.

        `paper` is the paper's number as text (say where it comes from if not the paper); `expect=False` declares a
        claim that the chapter found does not reproduce.
        """
        if not isinstance(id, str) or not _ID.match(id):
            raise ValueError(f"claim id must be lower-case letters, digits and dashes, got {id!r}")
        if any(c.id == id for c in self.claims):
            raise ValueError(f"claim {id!r} is checked twice in this notebook")
        if not says:
            raise ValueError(f"claim {id!r} needs says= (the statement, in words)")
        number = _as_number("observed", observed)
        op, threshold, holds = _decide(number, at_least, at_most, between)
        claim = Claim(id=id, says=says, observed=None if math.isnan(number) else number, op=op,
                      threshold=threshold, paper=str(paper), holds=holds, expect=bool(expect), chapter=self.chapter)
        self.claims.append(claim)
        self._record(claim)
        _show(f"**{verdict(claim.holds, claim.expect)}** · `{id}` · {says}: "
              f"observed {format_value(claim.observed)} {format_test(op, threshold)}"
              + (f" (paper: {paper})" if paper else ""))

    def table(self) -> None:
        """Show this notebook's claims as a table (the end of an experiments notebook)."""
        _show(claims_markdown(c.to_json() for c in self.claims))

    @staticmethod
    def _record(claim: Claim) -> None:
        path = os.environ.get("REPRO_CLAIMS_FILE")
        if path:
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps(claim.to_json()) + "\n")


def claims_markdown(records) -> str:
    """A markdown table of claim records (dicts as stored in report.json)."""
    rows = ["| claim | statement | paper | ours | test | verdict |", "|---|---|---|---|---|---|"]
    for c in records:
        says, paper = (_cell(c["says"]), _cell(c.get("paper") or "—"))
        rows.append(f"| `{c['id']}` | {says} | {paper} | {format_value(c['observed'])} | "
                    f"{format_test(c['op'], c['threshold'])} | {verdict(c['holds'], c.get('expect', True))} |")
    return "\n".join(rows)


def _cell(text: str) -> str:
    """Text made safe for a markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def read_records(path) -> list[dict]:
    """The claim records a notebook wrote (JSON lines); [] when it wrote none."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _show(markdown: str) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import Markdown, display
    except ImportError:
        get_ipython = None
    if get_ipython is not None and get_ipython() is not None:
        display(Markdown(markdown))
    else:
        print(markdown)
