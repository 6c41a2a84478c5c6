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

from .claim_tables import claims_markdown
from .verdicts import (KINDS, UNTESTABLE, as_expected, as_number, decide, decision_range, format_observed,
                       format_test, outcome, verdict)

_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")


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
        return decide(self.op, self.threshold, *decision_range(as_number("observed", observed), None)) is True


def _test(at_least, at_most, between) -> tuple[str, float | list]:
    """The one test given, as (op, threshold); a clear ValueError for none, two, or a bad `between`."""
    given = [(op, v) for op, v in (("at_least", at_least), ("at_most", at_most), ("between", between)) if v is not None]
    if len(given) != 1:
        raise ValueError("give exactly one of at_least=, at_most=, between=(lo, hi)")
    op, value = given[0]
    if op != "between":
        return op, as_number(op, value)
    if len(value) != 2:
        raise ValueError(f"between must be a pair (lo, hi), got {value!r}")
    lo, hi = (as_number("between", v) for v in value)
    if lo > hi:
        raise ValueError(f"between=({lo}, {hi}) has lo > hi")
    return op, [lo, hi]


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
        number = as_number("observed", observed)
        op, threshold = _test(at_least, at_most, between)
        lo, hi = decision_range(number, interval)
        unmet = self._unmet(id, requires)
        reason = (f"requires {', '.join(unmet)}, which did not hold" if unmet
                  else "the observed value is undefined" if math.isnan(lo) or math.isnan(hi) else "")
        claim = Claim(id=id, says=says, observed=None if math.isnan(number) else number, op=op, threshold=threshold,
                      paper=str(paper), holds=None if reason else decide(op, threshold, lo, hi), expect=expect,
                      kind=kind, chapter=self.chapter, source=str(source),
                      interval=None if interval is None else [lo, hi], requires=list(requires), untestable=reason,
                      controls=controls)
        self.claims.append(claim)
        self._record(claim)
        _glue_claim(claim)
        _show(f"**{verdict(claim.holds, claim.expect, reason)}** · {kind} · `{id}` · {says}: "
              f"observed {format_observed(claim.observed, claim.interval)} {format_test(op, threshold)}"
              + _paper_note(paper, source))

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
    """Glue several values in one call: myst-nb's `glue(name, value, display=False)` for each item of `values`, in
    order, inside a kernel (nothing outside one), so each shows exactly as if glued alone.

    A notebook writes `glue_quietly({"lam_max": float(lam_max), "steps": int(steps)})` where it would write one
    `glue` line per number; prose cites each name with {glue:text}`name`. A name that is not a non-empty string is
    a ValueError. Explained in chapters/appendix/reproducibility.md.
    """
    if not isinstance(values, dict):
        raise ValueError(f"glue_quietly takes a dict of name -> value, got {type(values).__name__}")
    bad = [name for name in values if not isinstance(name, str) or not name]
    if bad:
        raise ValueError(f"glued names must be non-empty strings, got {bad!r}")
    try:
        from IPython import get_ipython
    except ImportError:
        return
    if get_ipython() is None:
        return
    from myst_nb import glue

    for name, value in values.items():
        glue(name, value, display=False)


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


def _paper_note(paper, source) -> str:
    """' (paper: <what the paper says>; <where>)' of a claim row, leaving out an empty part."""
    note = "; ".join(part for part in (str(paper).strip(), str(source).strip()) if part)
    return f" (paper: {note})" if note else ""
