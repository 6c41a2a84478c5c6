"""The claim ledger (DESIGN.md §4): a paper's falsifiable statements, checked on our run.

    ledger = Ledger("specgd")
    ledger.check("spec-beats-gd", observed=gap, at_least=0.15, kind="paper", paper="+0.30 (Table 1)",
                 says="SpecGD's early balanced accuracy beats GD's")

Every claim has one kind (DESIGN.md §4): `paper` (the paper's statement; only these count as reproduced or not),
`ours` (the book's own mark for its small version) or `check` (true by construction: an identity, two code paths that
must agree). Each check shows a held / not-held row in the notebook, glues its observed value and its threshold under
names made from its id (`<id>-observed`, `<id>-threshold`, or `<id>-low` and `<id>-high` for `between`) so the prose
cites them, and, inside the build, appends a JSON record to the file named by `REPRO_CLAIMS_FILE`; the build gathers
those records into `_build/report.json`, the scoreboard and each chapter's claim table. A claim that the chapter knows
does not reproduce is declared with `expect=False`: the tests then require it *not* to hold, and the chapter explains
why. How to read claims is told in chapters/intro.md and chapters/appendix/reproducibility.md.
"""
from __future__ import annotations

import json
import math
import os
import re
from dataclasses import asdict, dataclass, field

_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
OPS = {"at_least": "≥", "at_most": "≤", "between": "in"}
KINDS = ("paper", "ours", "check")
KIND_TITLES = {"paper": "The paper's claims", "ours": "Our own marks", "check": "Checks (true by construction)"}


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
    kind: str = "paper"
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


def verdict_mark(holds: bool, expect: bool) -> str:
    """The short verdict of a table cell: ✓ held, ✗ not held, with a note when the chapter expects otherwise."""
    if holds:
        return "✓" if expect else "✓ (expected ✗)"
    return "✗ (expected)" if not expect else "✗ (unexpected)"


#: The legend printed under every claim table.
LEGEND = ("✓ held; ✗ (expected): not held, as the chapter declares (for a paper claim: not reproduced); "
          "✗ (unexpected) or ✓ (expected ✗): the verdict differs from the chapter's expectation, which the tests "
          "flag; — not run at that scale.")


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

    def check(self, id: str, observed, *, says: str, kind: str, at_least=None, at_most=None, between=None,
              paper: str = "", expect: bool = True) -> None:
        """Check `observed` against exactly one of `at_least`, `at_most`, `between=(lo, hi)`; show, glue, record it.

        `kind` is `"paper"`, `"ours"` or `"check"` (module docstring); a `paper` claim needs `paper=`, the paper's
        number or direction as text with where it was read (`"0.42 (Table 1)"`, `"falls (abstract)"`).
        `expect=False` declares a claim that the chapter found does not reproduce.
        """
        if not isinstance(id, str) or not _ID.match(id):
            raise ValueError(f"claim id must be lower-case letters, digits and dashes, got {id!r}")
        if any(c.id == id for c in self.claims):
            raise ValueError(f"claim {id!r} is checked twice in this notebook")
        if not says:
            raise ValueError(f"claim {id!r} needs says= (the statement, in words)")
        if kind not in KINDS:
            raise ValueError(f"claim {id!r}: kind must be one of {', '.join(map(repr, KINDS))}, got {kind!r} "
                             "(DESIGN.md §4: the paper's statement, our own mark, or a check true by construction)")
        if kind == "paper" and not str(paper).strip():
            raise ValueError(f"claim {id!r} is a paper claim: give paper= (the paper's number or direction, and "
                             "where it was read)")
        number = _as_number("observed", observed)
        op, threshold, holds = _decide(number, at_least, at_most, between)
        claim = Claim(id=id, says=says, observed=None if math.isnan(number) else number, op=op,
                      threshold=threshold, paper=str(paper), holds=holds, expect=bool(expect), kind=kind,
                      chapter=self.chapter)
        self.claims.append(claim)
        self._record(claim)
        _glue_claim(claim)
        _show(f"**{verdict(claim.holds, claim.expect)}** · {kind} · `{id}` · {says}: "
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


def glue_names(claim_id: str, op: str) -> dict[str, str]:
    """The glue names under which a claim's numbers are stored: observed, and the threshold (or low and high)."""
    names = {"observed": f"{claim_id}-observed"}
    if op == "between":
        names.update(low=f"{claim_id}-low", high=f"{claim_id}-high")
    else:
        names["threshold"] = f"{claim_id}-threshold"
    return names


def _glue_claim(claim: Claim) -> None:
    """Glue the claim's numbers (a missing observation is glued as NaN) when running in a kernel."""
    names = glue_names(claim.id, claim.op)
    values = {"observed": math.nan if claim.observed is None else claim.observed}
    if claim.op == "between":
        values.update(low=claim.threshold[0], high=claim.threshold[1])
    else:
        values["threshold"] = claim.threshold
    glue_quietly({names[k]: v for k, v in values.items()})


class PlainText:
    """Text that `{glue:text}` shows as it is (a glued `str` would show with its quotes)."""

    def __init__(self, text: str):
        self.text = str(text)

    def __repr__(self) -> str:
        return self.text


def glue_quietly(values: dict) -> None:
    """myst-nb's `glue(name, value, display=False)` for each item, inside a kernel; nothing outside one."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    if get_ipython() is None:
        return
    from myst_nb import glue

    for name, value in values.items():
        glue(name, value, display=False)


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
    head = "| claim | statement | paper | test | ours" + (" at ci | full run |" if with_full else " |")
    parts = []
    for kind in KINDS:
        rows = [c for c in records if c.get("kind", "paper") == kind]
        if rows:
            lines = [f"**{KIND_TITLES[kind]}**", "", head, "|---" * head.count(" | ") + "|---|"]
            lines += [_row(c, full, with_full, missing) for c in rows]
            parts.append("\n".join(lines))
    return "\n\n".join(parts) + ("\n\n" + LEGEND if parts else "")


def result_cell(c: dict | None, missing: str = "—") -> str:
    """A claim's observed value and its verdict mark, or `missing` when it did not run there."""
    if not c or c.get("not_at_ci"):
        return missing
    return f"{format_value(c['observed'])} {verdict_mark(c['holds'], c.get('expect', True))}"


def _row(c: dict, full: dict, with_full: bool, missing: str) -> str:
    says, paper = (table_cell(c["says"]), table_cell(c.get("paper") or "—"))
    row = (f"| `{c['id']}` | {says} | {paper} | {format_test(c['op'], c['threshold'])} | "
           f"{result_cell(c, '— (full scale only)')} |")
    if with_full:
        row += f" {result_cell(full.get(c['id']), '— (' + missing + ')')} |"
    return row


def table_cell(text: str) -> str:
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
