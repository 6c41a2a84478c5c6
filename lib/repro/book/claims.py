"""The claim ledger (DESIGN.md §4): a paper's falsifiable statements, checked on our run.

    ledger = Ledger("specgd")
    ledger.check("spec-beats-gd", observed=gap, at_least=0.15, interval=(lo, hi), kind="paper",
                 source="arXiv v3 §4, Fig. 2", paper="+0.30", says="SpecGD's early balanced accuracy beats GD's",
                 requires=["gd-converges"])

Every claim has one kind (DESIGN.md §4): `paper` (the paper's statement, with `source=` naming where it was read;
only these count as reproduced or not), `ours` (the book's own mark for its small version) or `check` (true by
construction: an identity, two code paths that must agree, a positive control).

Every claim has one of three verdicts: held, not held, or *untestable here*. A claim is untestable when a claim it
`requires` (an `ours` or `check` claim stated earlier in the same notebook, such as "the agent is competent") did not
hold, or when its observed value is undefined (NaN): the test did not take place, and the record's `holds` is
`None`. A noisy claim is decided on its 95% interval (`interval=(lo, hi)`): `at_least` on `lo`, `at_most` on `hi`,
`between` needs the whole interval inside.

Each check shows a row in the notebook, glues its numbers and verdict under names made from its id (`<id>-observed`;
`<id>-threshold`, or `<id>-low` and `<id>-high` for `between`; `<id>-interval-low` and `<id>-interval-high` when it
has an interval; `<id>-verdict`: held, not held or untestable) so the prose cites them, and, inside the build, appends a JSON record to the file named by
`REPRO_CLAIMS_FILE`; the build gathers those records into `_build/report.json`, the scoreboard and each chapter's
claim table. A claim that the chapter knows does not reproduce is declared with `expect=False`, one it knows cannot
be tested here with `expect="untestable"`: the tests then require that verdict, and the chapter explains why. How to
read claims is told in chapters/intro.md and chapters/appendix/reproducibility.md.
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
#: The three verdicts, as the records spell them in `expect` (and `holds`: True, False, None).
UNTESTABLE = "untestable"
MARKS = {"held": "✓", "not held": "✗", UNTESTABLE: "○"}


def outcome(holds) -> str:
    """'held', 'not held' or 'untestable' for a record's `holds` (True, False, None)."""
    return UNTESTABLE if holds is None else ("held" if holds else "not held")


def expected_outcome(expect) -> str:
    """The verdict a chapter declares with `expect` (True, False or "untestable")."""
    return UNTESTABLE if expect == UNTESTABLE else ("held" if expect else "not held")


def as_expected(record: dict) -> bool:
    """Whether a claim record's verdict is the one its chapter declares."""
    return outcome(record.get("holds")) == expected_outcome(record.get("expect", True))


@dataclass
class Claim:
    """One checked claim; `to_json()` gives the record the build stores. `holds` is None when untestable."""

    id: str
    says: str
    observed: float | None
    op: str
    threshold: float | list
    paper: str
    holds: bool | None
    expect: bool | str
    kind: str = "paper"
    chapter: str = ""
    notebook: str = field(default_factory=lambda: os.environ.get("REPRO_NOTEBOOK", ""))
    source: str = ""
    interval: list | None = None
    requires: list = field(default_factory=list)
    untestable: str = ""
    controls: str = ""

    def to_json(self) -> dict:
        return asdict(self)

    @property
    def as_expected(self) -> bool:
        return as_expected(self.to_json())

    def passes(self, observed) -> bool:
        """Whether another observation (another seed's, say) passes this claim's test; NaN never does."""
        return _holds(self.op, self.threshold, *_span(_as_number("observed", observed), None)) is True


def format_value(x) -> str:
    """A number as the book prints it: four significant digits, `n/a` for a missing value."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.4g}"


def format_observed(observed, interval=None) -> str:
    """An observed value with its 95% interval when it has one: `0.12 [0.03, 0.21]`."""
    if not interval:
        return format_value(observed)
    return f"{format_value(observed)} [{format_value(interval[0])}, {format_value(interval[1])}]"


def format_test(op: str, threshold) -> str:
    """The test a claim applies, e.g. `≥ 0.15` or `in [-2.5, -1.5]`."""
    if op == "between":
        lo, hi = threshold
        return f"in [{format_value(lo)}, {format_value(hi)}]"
    return f"{OPS[op]} {format_value(threshold)}"


def verdict(holds, expect, reason: str = "") -> str:
    """Held / not held / untestable (with its reason), and whether that is what the chapter expects."""
    got, wanted = outcome(holds), expected_outcome(expect)
    text = {"held": "✓ held", "not held": "✗ not held", UNTESTABLE: f"○ untestable: {reason or 'no test'}"}[got]
    if got == wanted:
        return text + (" (as expected: not reproduced)" if got == "not held" else "")
    return f"{text} (the chapter expects {wanted})"


def verdict_mark(holds, expect) -> str:
    """The short verdict of a table cell: ✓ held, ✗ not held, ○ untestable, with a note when the chapter expects
    another verdict."""
    got, wanted = outcome(holds), expected_outcome(expect)
    if got == wanted:
        return {"held": "✓", "not held": "✗ (expected)", UNTESTABLE: "○ untestable"}[got]
    if got == "not held" and wanted == "held":
        return "✗ (unexpected)"
    return f"{MARKS[got]} (expected {MARKS[wanted]})"


#: The legend printed under every claim table.
LEGEND = ("✓ held; ✗ (expected): not held, as the chapter declares (for a paper claim: not reproduced); "
          "○ untestable: a precondition of the test failed or the observed value is undefined, so the claim was not "
          "tested here (a defect of the miniature, not a finding about the paper); ✗ (unexpected) or "
          "✓ (expected ✗) and the like: the verdict differs from the chapter's expectation, which the tests flag; "
          "[lo, hi]: the 95% interval the verdict was decided on; — not run at that scale.")


def _as_number(name, value) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None
    return number


def _test(at_least, at_most, between) -> tuple[str, float | list]:
    """The one test given, as (op, threshold); a clear ValueError for none, two, or a bad `between`."""
    given = [(op, v) for op, v in (("at_least", at_least), ("at_most", at_most), ("between", between)) if v is not None]
    if len(given) != 1:
        raise ValueError("give exactly one of at_least=, at_most=, between=(lo, hi)")
    op, value = given[0]
    if op != "between":
        return op, _as_number(op, value)
    if len(value) != 2:
        raise ValueError(f"between must be a pair (lo, hi), got {value!r}")
    lo, hi = (_as_number("between", v) for v in value)
    if lo > hi:
        raise ValueError(f"between=({lo}, {hi}) has lo > hi")
    return op, [lo, hi]


def _span(observed: float, interval) -> tuple[float, float]:
    """The range a claim is decided on: its interval when it has one, else the point (observed, observed)."""
    if interval is None:
        return observed, observed
    if len(interval) != 2:
        raise ValueError(f"interval must be a pair (lo, hi), the 95% interval of the observed value; got {interval!r}")
    lo, hi = (_as_number("interval", v) for v in interval)
    if lo > hi:
        raise ValueError(f"interval=({lo}, {hi}) has lo > hi")
    return lo, hi


def _holds(op: str, threshold, lo: float, hi: float) -> bool | None:
    """The decision on the range [lo, hi]: `at_least` on lo, `at_most` on hi, `between` on both; None when the range
    is undefined (NaN)."""
    if math.isnan(lo) or math.isnan(hi):
        return None
    if op == "at_least":
        return bool(lo >= threshold)
    if op == "at_most":
        return bool(hi <= threshold)
    return bool(threshold[0] <= lo and hi <= threshold[1])


def _expect(claim_id: str, expect) -> bool | str:
    if expect == UNTESTABLE:
        return UNTESTABLE
    if isinstance(expect, bool) or type(expect).__name__ == "bool_":
        return bool(expect)
    raise ValueError(f"claim {claim_id!r}: expect must be True, False or 'untestable', got {expect!r}")


class Ledger:
    """The claims of one notebook of chapter `chapter` (its folder name under chapters/)."""

    def __init__(self, chapter: str):
        if not isinstance(chapter, str) or not _ID.match(chapter):
            raise ValueError(f"chapter must be a chapter slug like 'specgd', got {chapter!r}")
        self.chapter = chapter
        self.claims: list[Claim] = []

    def check(self, id: str, observed, *, says: str, kind: str, at_least=None, at_most=None, between=None,
              interval=None, requires=(), source: str = "", paper: str = "", expect: bool | str = True,
              controls: str = "") -> None:
        """Check `observed` against exactly one of `at_least`, `at_most`, `between=(lo, hi)`; show, glue, record it.

        `kind` is `"paper"`, `"ours"` or `"check"` (module docstring); a `paper` claim needs `source=` (where the
        paper states it, with the version: `"arXiv v2 §4.2"`, `"Table 1"`, `"abstract"`) and `paper=` (the paper's
        number or direction as text). `interval=(lo, hi)` is the 95% interval of `observed`, on which the claim is
        then decided. `requires=[ids]` names the `ours` or `check` claims of this notebook that must hold for this
        one to be a test. `expect` is the verdict the chapter declares: True, False (it found the claim does not
        reproduce) or "untestable". `controls=` is set by `positive_control`.
        """
        self._validate(id, says, kind, source, paper)
        expect = _expect(id, expect)
        number = _as_number("observed", observed)
        op, threshold = _test(at_least, at_most, between)
        lo, hi = _span(number, interval)
        unmet = self._unmet(id, requires)
        reason = (f"requires {', '.join(unmet)}, which did not hold" if unmet
                  else "the observed value is undefined" if math.isnan(lo) or math.isnan(hi) else "")
        claim = Claim(id=id, says=says, observed=None if math.isnan(number) else number, op=op, threshold=threshold,
                      paper=str(paper), holds=None if reason else _holds(op, threshold, lo, hi), expect=expect,
                      kind=kind, chapter=self.chapter, source=str(source),
                      interval=None if interval is None else [lo, hi], requires=list(requires), untestable=reason,
                      controls=controls)
        self.claims.append(claim)
        self._record(claim)
        _glue_claim(claim)
        _show(f"**{verdict(claim.holds, claim.expect, reason)}** · {kind} · `{id}` · {says}: "
              f"observed {format_observed(claim.observed, claim.interval)} {format_test(op, threshold)}"
              + (f" (paper: {paper}; {source})" if paper or source else ""))

    def _validate(self, id, says, kind, source, paper) -> None:
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
            raise ValueError(f"claim {id!r} is a paper claim: give paper= (the paper's number or direction)")
        if kind == "paper" and not str(source).strip():
            raise ValueError(f"claim {id!r} is a paper claim: give source= (where the paper states it, with the "
                             "version: 'arXiv v2 §4.2', 'Table 1', 'abstract'); a statement only a brief or a summary "
                             "makes is kind='ours' (DESIGN.md §4)")

    def _unmet(self, id: str, requires) -> list[str]:
        """The preconditions of claim `id` that did not hold; ValueError for one not stated earlier here."""
        if isinstance(requires, str):
            raise ValueError(f"claim {id!r}: requires= is a list of claim ids, e.g. requires=[{requires!r}]")
        earlier = {c.id: c for c in self.claims}
        unmet = []
        for name in requires:
            if name not in earlier:
                raise ValueError(f"claim {id!r} requires {name!r}, which is not checked earlier in this notebook "
                                 f"(checked so far: {', '.join(earlier) or 'none'})")
            if earlier[name].kind == "paper":
                raise ValueError(f"claim {id!r} requires {name!r}, a paper claim: a precondition is one of our own "
                                 "marks or a check (kind 'ours' or 'check')")
            if earlier[name].holds is not True:
                unmet.append(name)
        return unmet

    def positive_control(self, id: str, observed, *, controls: str, says: str, **test) -> None:
        """A positive control (DESIGN.md §4): a `check` that runs the chapter's own analysis on a planted case where
        the paper's mechanism is present by construction, and shows that the analysis finds it, so that a claim
        `controls` that does not reproduce on our data is a finding and not a blind test. `test` takes the
        keywords of `check` (`at_least=`, `interval=`, `expect=` …)."""
        if not isinstance(controls, str) or not _ID.match(controls):
            raise ValueError(f"positive control {id!r}: controls= names the claim id it controls, got {controls!r}")
        self.check(id, observed, says=f"positive control for {controls}: {says}", kind="check", controls=controls,
                   **test)

    def table(self) -> None:
        """Show this notebook's claims as a table (the end of an experiments notebook)."""
        _show(claims_markdown(c.to_json() for c in self.claims))

    @staticmethod
    def _record(claim: Claim) -> None:
        path = os.environ.get("REPRO_CLAIMS_FILE")
        if path:
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps(claim.to_json()) + "\n")


def glue_names(claim_id: str, op: str, interval: bool = False) -> dict[str, str]:
    """The glue names under which a claim's numbers are stored: observed, the threshold (or low and high), the
    interval's ends when it has one (`<id>-interval-low`, `<id>-interval-high`) and the verdict (`<id>-verdict`)."""
    names = {"observed": f"{claim_id}-observed", "verdict": f"{claim_id}-verdict"}
    if op == "between":
        names.update(low=f"{claim_id}-low", high=f"{claim_id}-high")
    else:
        names["threshold"] = f"{claim_id}-threshold"
    if interval:
        names.update(interval_low=f"{claim_id}-interval-low", interval_high=f"{claim_id}-interval-high")
    return names


def _glue_claim(claim: Claim) -> None:
    """Glue the claim's numbers (a missing observation is glued as NaN) and its verdict when running in a kernel."""
    names = glue_names(claim.id, claim.op, interval=claim.interval is not None)
    values = {"observed": math.nan if claim.observed is None else claim.observed,
              "verdict": PlainText(outcome(claim.holds))}
    if claim.op == "between":
        values.update(low=claim.threshold[0], high=claim.threshold[1])
    else:
        values["threshold"] = claim.threshold
    if claim.interval is not None:
        values.update(interval_low=claim.interval[0], interval_high=claim.interval[1])
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
    cell = f"{format_observed(c['observed'], c.get('interval'))} {verdict_mark(c['holds'], c.get('expect', True))}"
    return cell + (f" ({c['untestable']})" if c.get("holds") is None and c.get("untestable") else "")


def paper_cell(c: dict) -> str:
    """What the paper says (its number or direction) and where it was read, for a table cell."""
    paper, source = str(c.get("paper") or "").strip(), str(c.get("source") or "").strip()
    text = f"{paper} ({source})" if paper and source and source not in paper else paper or source
    return table_cell(text or "—")


def _row(c: dict, full: dict, with_full: bool, missing: str) -> str:
    says, paper = table_cell(c["says"]), paper_cell(c)
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
