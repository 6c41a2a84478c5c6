"""repro: the shared library of the book "ICLR 2026 in Miniature".

- `repro.book`: the machinery (build, cache, claims, scale and seeding, plot style); see chapters/intro.md.
- `repro.common`: the generic helpers, each written once (checks, seed spreads, thread limits, provenance, tables).
- `repro.nn`: substrate that chapters share (DESIGN.md §1: code moves here when a second chapter needs it; until then it
  lives in its chapter's package).
- one module or package per paper's method, named after its chapter: chapters/<slug>/ -> `repro.<slug_with_underscores>`
  (e.g. `repro.specgd`, explained in chapters/specgd/).
"""
from pathlib import Path

__version__ = "0.1.0"

#: The book's root folder (where `_toc.yml` lives), found from this file: lib/repro/__init__.py.
ROOT = Path(__file__).resolve().parents[2]
#: Small committed inputs (data sets, checkpoints).
DATA_DIR = ROOT / "data"
