"""The book's machinery (DESIGN.md §2–§5).

For notebooks: `setup` (scale, seed, device; seeding; plot style), `Ledger` (claims of three kinds), `FullRun` (the
chapter's recorded full-scale run, read and glued at ci), `progress` (tqdm bars that stay out of the published book). For the build: `python -m repro.book build|list` (see `repro.book.cli`).
"""
from .imports import skip_iri_checker

skip_iri_checker()  # before anything imports jsonschema: see repro.book.imports

from .claims import KINDS, Claim, Ledger
from .records import FullRun
from .params import SCALES, DEVICES, BookParameterError, Run, setup
from .progress import progress
from .seeding import seed_everything
from .style import use_book_style

__all__ = ["KINDS", "Claim", "Ledger", "FullRun", "SCALES", "DEVICES", "BookParameterError", "Run", "setup", "progress",
           "seed_everything", "use_book_style"]
