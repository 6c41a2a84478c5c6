"""Read the book's table of contents: which pages exist and which of them are notebooks (DESIGN.md §2, step 1)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml


@dataclass(frozen=True)
class Page:
    """One `file:` entry of `_toc.yml`, resolved to its source on disk."""

    name: str          # as in the toc, without suffix: chapters/specgd/01_theory
    source: Path       # the file on disk: <root>/chapters/specgd/01_theory.md

    @property
    def is_notebook(self) -> bool:
        return is_notebook_source(self.source)

    @property
    def chapter(self) -> str:
        """The chapter slug: the folder under chapters/ ('' for top-level pages)."""
        parts = Path(self.name).parts
        return parts[1] if len(parts) > 2 and parts[0] == "chapters" else ""


def is_notebook_source(path: Path) -> bool:
    """A MyST notebook source: a `.md` whose front matter has a jupytext section and a kernelspec."""
    if path.suffix != ".md" or not path.exists():
        return False
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return False
    header = text.split("---", 2)[1]
    return "jupytext" in header and "kernelspec" in header


def _entries(node):
    if isinstance(node, dict):
        for key in ("root", "file"):
            if key in node:
                yield node[key]
        for value in node.values():
            if isinstance(value, (dict, list)):
                yield from _entries(value)
    elif isinstance(node, list):
        for item in node:
            yield from _entries(item)


def read_toc(root: Path) -> list[Page]:
    """Every page of `<root>/_toc.yml` in reading order; a missing file is a clear error."""
    toc_path = root / "_toc.yml"
    if not toc_path.exists():
        raise FileNotFoundError(f"no _toc.yml in {root}: run from the book's root folder")
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    pages = []
    for name in _entries(toc):
        name = str(name)
        stem = str(Path(name).with_suffix("")) if name.endswith((".md", ".ipynb")) else name
        source = root / f"{stem}.md"
        if not source.exists():
            raise FileNotFoundError(f"_toc.yml lists {name!r} but {source.relative_to(root)} does not exist")
        pages.append(Page(name=stem, source=source))
    return pages


def notebooks(root: Path, only: list[str] | None = None) -> list[Page]:
    """The notebook pages of the book, optionally only those of the chapters named in `only`."""
    pages = [p for p in read_toc(root) if p.is_notebook]
    if only:
        known = {p.chapter for p in pages}
        unknown = sorted(set(only) - known)
        if unknown:
            raise ValueError(f"--only: no chapter named {', '.join(unknown)}; chapters with notebooks: "
                             f"{', '.join(sorted(known))}")
        pages = [p for p in pages if p.chapter in only]
    return pages
