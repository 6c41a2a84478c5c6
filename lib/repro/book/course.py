"""The course guide's facts about each chapter, read from the book's sources (chapters/appendix/course.md).

What can be computed is computed: the part a chapter sits in, its words and reading time, its exercises, the shared
substrate (`repro.nn`) its code and notebooks import. What cannot is written by the chapter's
author in the front matter of its `index.md`:

    ---
    course:
      level: intermediate                    # introductory | intermediate | advanced
      prerequisites: linear algebra; gradient descent
      builds_on: [specgd]                    # chapters to read first (optional)
    ---

The build stores these facts in its report (`report["course"]`), and `repro.book.pages` turns them, with the run
times of the build, into the course guide's tables.
"""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from .toc import read_toc

LEVELS = ("introductory", "intermediate", "advanced")
WORDS_PER_MINUTE = 200
NOT_SUBSTRATE = {"book", "common", "__pycache__"}
_CODE_BLOCK = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
_EXERCISE = re.compile(r"^```\{exercise\}", re.M)


def front_matter(path: Path) -> dict:
    """The YAML front matter of a Markdown file ({} when it has none)."""
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        return {}
    end = text.find("\n---", 4)
    if end < 0:
        raise ValueError(f"{path}: the front matter opened by '---' is never closed")
    return yaml.safe_load(text[4:end]) or {}


def course_metadata(index: Path) -> dict:
    """The `course:` block of a chapter's index.md, checked: a level from LEVELS, prerequisites as text."""
    meta = front_matter(index).get("course")
    if not isinstance(meta, dict):
        raise ValueError(f"{index}: no `course:` block in the front matter (level, prerequisites; see "
                         "lib/repro/book/course.py)")
    if meta.get("level") not in LEVELS:
        raise ValueError(f"{index}: course.level must be one of {', '.join(LEVELS)}, got {meta.get('level')!r}")
    if not isinstance(meta.get("prerequisites"), str) or not meta["prerequisites"].strip():
        raise ValueError(f"{index}: course.prerequisites must be a non-empty text")
    builds_on = meta.get("builds_on", [])
    if not isinstance(builds_on, list):
        raise ValueError(f"{index}: course.builds_on must be a list of chapter slugs, got {builds_on!r}")
    return {"level": meta["level"], "prerequisites": meta["prerequisites"].strip(), "builds_on": builds_on}


def _parts(root: Path) -> dict[str, str]:
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    return {Path(ch["file"]).parts[1]: part.get("caption", "")
            for part in toc.get("parts", []) for ch in part.get("chapters", [])
            if str(ch.get("file", "")).startswith("chapters/") and str(ch["file"]).endswith("/index")}


def _words(paths) -> int:
    return sum(len(_CODE_BLOCK.sub(" ", p.read_text(encoding="utf-8")).split()) for p in paths)


def substrate_modules(root: Path) -> list[str]:
    """The shared packages of `lib/repro` (nn, data, rl, ...): neither a chapter's own code nor book/common."""
    lib = root / "lib" / "repro"
    if not lib.is_dir():
        return []
    chapters = {p.name.replace("-", "_") for p in (root / "chapters").iterdir() if p.is_dir()}
    return sorted(p.name for p in lib.iterdir()
                  if p.is_dir() and p.name not in NOT_SUBSTRATE | chapters and (p / "__init__.py").exists())


def _substrate_used(root: Path, slug: str, sources: list[Path], shared: list[str]) -> list[str]:
    """The shared packages that a chapter's notebooks (`repro.nn`) or its code (`from ..nn` in a package, `from .nn`
    in a single module) import."""
    own = root / "lib" / "repro" / slug.replace("-", "_")
    code = sorted(own.rglob("*.py")) if own.is_dir() else [own.with_suffix(".py")]
    relative = r"from \.\." if own.is_dir() else r"from \."
    texts = [(f.read_text(encoding="utf-8"), r"repro\.") for f in sources]
    texts += [(f.read_text(encoding="utf-8"), rf"(?:repro\.|{relative})") for f in code if f.exists()]
    return [m for m in shared if any(re.search(rf"{prefix}{m}\b", text) for text, prefix in texts)]


def chapter_facts(root: Path) -> list[dict]:
    """One dict per chapter in reading order: slug, title, part, level, prerequisites, builds_on, words, reading
    minutes, exercises, substrate used. A chapter without a valid `course:` block is a clear error."""
    parts, shared = _parts(root), substrate_modules(root)
    pages: dict[str, list[Path]] = {}
    for page in read_toc(root):
        if page.chapter and page.chapter != "appendix":
            pages.setdefault(page.chapter, []).append(page.source)
    facts = []
    for slug, sources in pages.items():
        index = root / "chapters" / slug / "index.md"
        title = next((line[2:].strip() for line in index.read_text(encoding="utf-8").splitlines()
                      if line.startswith("# ")), slug)
        words = _words(sources)
        facts.append({"slug": slug, "title": title, "part": parts.get(slug, ""), **course_metadata(index),
                      "words": words, "read_minutes": max(1, round(words / WORDS_PER_MINUTE)),
                      "exercises": sum(len(_EXERCISE.findall(p.read_text(encoding="utf-8"))) for p in sources),
                      "substrate": _substrate_used(root, slug, sources, shared)})
    unknown = {b for f in facts for b in f["builds_on"]} - set(pages)
    if unknown:
        raise ValueError(f"course.builds_on names chapters that do not exist: {', '.join(sorted(unknown))}")
    return facts


def suggested_order(facts: list[dict]) -> list[str]:
    """Chapters in a teaching order: every chapter after those it builds on; otherwise easier levels first, then the
    book's order. (chapters/appendix/course.md)"""
    position = {f["slug"]: i for i, f in enumerate(facts)}
    rank = {f["slug"]: (LEVELS.index(f["level"]), position[f["slug"]]) for f in facts}
    needs = {f["slug"]: set(f["builds_on"]) for f in facts}
    order: list[str] = []
    while needs:
        ready = [s for s, n in needs.items() if n <= set(order)]
        if not ready:
            raise ValueError(f"course.builds_on has a cycle among {', '.join(sorted(needs))}")
        nxt = min(ready, key=rank.get)
        order.append(nxt)
        del needs[nxt]
    return order
