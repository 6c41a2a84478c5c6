"""The execution cache (DESIGN.md §2, step 2).

A notebook is re-executed only when its key changes. The key hashes the notebook source, every file under
`lib/repro/` (jupyter-book's own cache ignores library changes, so it is not used), every file under its chapter's
`data/<slug>/` (shipped runs, checkpoints and the full-run record it reads: a removed or changed file re-executes the
notebook, so a missing file shows its error instead of old outputs; the seed record, `seeds-run.json`, which no
notebook reads, is left out), the parameters and `requirements.lock`.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

IGNORED_PARTS = {"__pycache__", ".ipynb_checkpoints"}
IGNORED_SUFFIXES = {".pyc", ".pyo"}
#: Files of data/<slug>/ that no notebook reads: the seed sweep's record (repro.book.seeds).
NOT_READ_BY_NOTEBOOKS = {"seeds-run.json"}


def library_files(lib_dir: Path) -> list[Path]:
    """Every file under `lib_dir` that can change what a notebook computes, in a stable order."""
    if not lib_dir.is_dir():
        return []
    files = [p for p in lib_dir.rglob("*") if p.is_file()
             and not IGNORED_PARTS.intersection(p.parts) and p.suffix not in IGNORED_SUFFIXES]
    return sorted(files, key=lambda p: p.relative_to(lib_dir).as_posix())


def cache_key(source: Path, params: dict, root: Path) -> str:
    """The hex sha256 of notebook source + library + its chapter's data + parameters + lock file."""
    h = hashlib.sha256()

    def add(label: str, data: bytes):
        h.update(label.encode() + b"\0" + len(data).to_bytes(8, "little") + data)

    add("source", source.read_bytes())
    lib_dir = root / "lib" / "repro"
    for f in library_files(lib_dir):
        add("lib:" + f.relative_to(lib_dir).as_posix(), f.read_bytes())
    data_dir = root / "data" / source.parent.name
    for f in library_files(data_dir):
        if f.name in NOT_READ_BY_NOTEBOOKS:
            continue
        add("data:" + f.relative_to(data_dir).as_posix(), f.read_bytes())
    add("params", json.dumps(params, sort_keys=True).encode())
    lock = root / "requirements.lock"
    add("lock", lock.read_bytes() if lock.exists() else b"")
    return h.hexdigest()


class Cache:
    """Executed notebooks by key: `<dir>/<key>.ipynb` with `<dir>/<key>.json` (seconds, claims)."""

    def __init__(self, directory: Path):
        self.dir = directory

    def get(self, key: str) -> dict | None:
        meta, nb = self.dir / f"{key}.json", self.dir / f"{key}.ipynb"
        if meta.exists() and nb.exists():
            return json.loads(meta.read_text())
        return None

    def put(self, key: str, executed: Path, meta: dict) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(executed, self.dir / f"{key}.ipynb")
        (self.dir / f"{key}.json").write_text(json.dumps(meta, indent=1))

    def notebook(self, key: str) -> Path:
        return self.dir / f"{key}.ipynb"
