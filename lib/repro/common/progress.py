"""Progress bars that show when a person runs a notebook and stay out of the published book (`repro.book` exports
`progress` for notebooks; the substrate's training loops take it from here).

Explained in chapters/appendix/reproducibility.md.
"""
from __future__ import annotations

import os


def in_build() -> bool:
    """True while the book's build (or its tests) executes the notebook: `REPRO_BUILD` is set.

    Explained in chapters/appendix/reproducibility.md.
    """
    return bool(os.environ.get("REPRO_BUILD"))


def progress(iterable, desc: str | None = None, total: int | None = None, **tqdm_kwargs):
    """Wrap `iterable` in a tqdm bar when run interactively; return it unchanged inside the build.

    Explained in chapters/appendix/reproducibility.md.
    """
    if in_build():
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, desc=desc, total=total, **tqdm_kwargs)
