"""Numbers typed into prose (DESIGN.md §3: every number in prose is glued, so text and results cannot drift apart).

`typed_numbers(path)` yields (line, number, text) for every decimal number, percentage or spelled-out count of runs
or seeds in a page's prose: outside the YAML header, code cells, math, inline code, roles (`{glue:text}` and the
rest) and link targets. A number quoted from the paper is allowed when its sentence says whose it is (the paper, its
tables and figures, the brief, the authors' repository or notes: see QUOTED). Used by tests/book/test_structure.py.
"""
from __future__ import annotations

import re
from pathlib import Path

FENCE = re.compile(r"^(`{3,}|~{3,})\s*(\S*)")
#: Fenced blocks whose body is not prose: code, math, tables of settings written as code.
NOT_PROSE = ("{code-cell}", "{math}", "{code-block}", "python", "bash", "text", "console", "yaml", "json", "")
#: Words that mark a number as quoted from elsewhere, not produced by our code.
QUOTED = re.compile(r"\bpaper|\bTable|\bFig\.|\bFigure|\bbrief|\brepositor|\brepo\b|research notes|\babstract|"
                    r"\bSec\.|\bEq\.|\bThm\b|\bTheorem|\bthe authors|\barXiv|\bversion|\bPython\b|\bv\d", re.I)
NUMBER = re.compile(r"(?<![\w.\-^])(\d+\.\d+|\d+(?:\.\d+)?\s?%)(?![\w.]*\d)")
COUNT = re.compile(r"\b(two|three|four|five|six|seven|eight|nine|ten|twelve|twenty)\s+(runs|seeds|variants|trials)\b",
                   re.I)
MASKS = [re.compile(p, re.S) for p in (r"\$\$.*?\$\$", r"\$[^$\n]+\$", r"\{[\w:-]+\}`[^`]*`", r"`[^`]*`",
                                        r"\]\([^)]*\)", r"https?://\S+", r"<!--.*?-->")]


def prose_lines(text: str):
    """(line number, line) of the prose of a MyST page: no header, no code or math blocks, no directive options."""
    lines = text.split("\n")
    start = lines.index("---", 1) + 1 if lines and lines[0] == "---" else 0
    fence = None                                          # (marker, whether the block is prose)
    for n in range(start, len(lines)):
        line, m = lines[n], FENCE.match(lines[n].strip())
        if fence:
            if m and m.group(1)[0] == fence[0][0] and len(m.group(1)) >= len(fence[0]) and not m.group(2):
                fence = None
            elif fence[1] and not line.lstrip().startswith(":"):
                yield n + 1, line
            continue
        if m:
            fence = (m.group(1), not (m.group(2) in NOT_PROSE or m.group(2).startswith(("{code", "{math"))))
            continue
        yield n + 1, line


def _masked(line: str) -> str:
    for pattern in MASKS:
        line = pattern.sub(" ", line)
    return line


SENTENCE_END = re.compile(r"[.;!?]\s")
ABBREVIATIONS = ("Sec.", "Fig.", "Eq.", "Thm.", "e.g.", "i.e.", "cf.", "vs.", "nets.")


def _current_sentence(before: str) -> str:
    """The start of the sentence that `before` ends in (abbreviations such as 'Sec.' end no sentence)."""
    ends = [m.end() for m in SENTENCE_END.finditer(before)
            if not before[:m.start() + 1].endswith(ABBREVIATIONS)]
    return before[ends[-1]:] if ends else before


def typed_numbers(path: Path):
    """(line, number, line text) of each number typed into the prose of `path` and not marked as quoted.

    A sentence may begin on the line before: what it says of whose number it is counts from its start.
    """
    previous = ""
    for n, line in prose_lines(path.read_text(encoding="utf-8")):
        text = _masked(line)
        for m in NUMBER.finditer(text):
            sentence = _current_sentence(previous + " " + text[:m.start()]) + text[m.start():m.start() + 40]
            if not QUOTED.search(sentence):
                yield n, m.group(0), line.strip()
        for m in COUNT.finditer(text):
            yield n, m.group(0), line.strip()
        previous = text if text.strip() else ""
