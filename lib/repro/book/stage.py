"""Stage a copy of the book for rendering (DESIGN.md §2, step 3).

The stage is the book's sources with each notebook source replaced by its executed `.ipynb` (the source itself goes to
`_static/sources/`, offered for download beside it), markers filled in from the build report, and MathJax copied into
`_static/` so that pages typeset math with no network. Files are written
only when their content changed, so Sphinx re-renders only the pages that did.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from .pages import fill_markers

#: What the stage copies from the book's root, besides the chapters (jupyter-book loads `_static/*.css`, `*.js` itself).
TOP_LEVEL = ("_config.yml", "_toc.yml", "references.bib", "_static/book.css", "_static/book.js")
#: Where a notebook's source (.md) is offered for download beside its executed .ipynb (see _static/book.js).
SOURCES_TARGET = Path("_static") / "sources"
MATHJAX_SOURCE = Path("node_modules") / "mathjax" / "es5"
MATHJAX_TARGET = Path("_static") / "mathjax"
MATHJAX_ENTRY = "tex-chtml.js"


def _write_if_changed(path: Path, data: bytes) -> None:
    if path.exists() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _assignments(cell: dict) -> set[str]:
    source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    return {line.replace(" ", "") for line in source.splitlines() if "=" in line and not line.startswith("#")}


def for_readers(ipynb: bytes) -> bytes:
    """The executed notebook as readers see it: papermill's injected-parameters cell is hidden when it only repeats
    the defaults of the `parameters` cell above it, and shown when the build ran with other values."""
    nb = json.loads(ipynb)
    tagged = {tag: cell for cell in nb["cells"] for tag in cell.get("metadata", {}).get("tags", [])}
    injected, defaults = tagged.get("injected-parameters"), tagged.get("parameters")
    if injected and defaults and _assignments(injected) == _assignments(defaults):
        injected["metadata"]["tags"].append("remove-cell")
    return json.dumps(nb, indent=1, ensure_ascii=False).encode()


def stage_files(root: Path, executed: dict[str, Path], report: dict) -> dict[str, bytes]:
    """The stage's contents as {relative path: bytes}.

    `executed` maps a notebook's toc name (chapters/specgd/01_theory) to its executed .ipynb; notebooks without
    one are staged as their unexecuted source.
    """
    files = {name: (root / name).read_bytes() for name in TOP_LEVEL if (root / name).exists()}
    for path in sorted((root / "chapters").rglob("*")):
        if not path.is_file() or ".ipynb_checkpoints" in path.parts or path.suffix == ".ipynb":
            continue
        rel = path.relative_to(root).as_posix()
        stem = rel[:-3] if rel.endswith(".md") else None
        if stem in executed:
            files[stem + ".ipynb"] = for_readers(executed[stem].read_bytes())
            files[(SOURCES_TARGET / rel).as_posix()] = path.read_bytes()
        elif path.suffix == ".md":
            files[rel] = fill_markers(path.read_text(encoding="utf-8"), report).encode()
        else:
            files[rel] = path.read_bytes()
    mathjax = root / MATHJAX_SOURCE
    if not mathjax.is_dir():
        raise FileNotFoundError(f"{MATHJAX_SOURCE} is missing: run `npm ci` (make book does) so the book can serve "
                                "MathJax itself")
    for path in mathjax.rglob("*"):
        # the one combined component the book loads, and the folders it loads lazily (fonts, extensions, menu)
        if path.is_file() and (path.name == MATHJAX_ENTRY or path.parent != mathjax):
            files[(MATHJAX_TARGET / path.relative_to(mathjax)).as_posix()] = path.read_bytes()
    return files


def sync_stage(stage: Path, files: dict[str, bytes]) -> None:
    """Make `stage` hold exactly `files` (plus what Sphinx writes there), touching only what changed."""
    stage.mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        _write_if_changed(stage / rel, data)
    keep = set(files) | {"conf.py"}
    for path in sorted(stage.rglob("*"), reverse=True):
        rel = path.relative_to(stage).as_posix()
        if path.is_file() and rel not in keep:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def clean(stage: Path) -> None:
    """Remove the stage."""
    shutil.rmtree(stage, ignore_errors=True)
