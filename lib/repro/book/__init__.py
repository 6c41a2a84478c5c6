"""The book's machinery (DESIGN.md §2–§5), one job per module.

For notebooks: `start` (`notebook`: the first cell in one call, `run, ledger = start(slug, scale=scale, seed=seed,
device=device)`), `setup` (`params`: scale, seed, device; seeding; plot style), `Ledger` (`claims`: claims of three
kinds), `glue_quietly` (`claims`: glue a dict of name -> value in one call), `FullRun` (`full_run`: the chapter's
recorded full-scale run, read and glued at ci), `progress` (from `repro.common.progress`: tqdm bars that stay out of
the published book).

Inside: `verdicts` (what a verdict is and how it is written), `claim_tables` (the claim tables), `records` (the
full-run and seed records, one writer policy), `pages` with `robustness`, `authors` and `course` (the generated
pages), `build`, `execute`, `executors`, `cache`, `stage`, `render`, `seeds` (the build and the seed sweep),
`machine` (cores and package versions), `toc`, `seeding`, `style`, `imports`. For the build:
`python -m repro.book build|list|seeds` (see `repro.book.cli`).
"""
from .imports import skip_iri_checker

skip_iri_checker()  # before anything imports jsonschema: see repro.book.imports

from .claims import KINDS, Claim, Ledger, glue_quietly
from .full_run import FullRun
from ..common.progress import progress
from .params import SCALES, DEVICES, BookParameterError, Run, setup
from .notebook import start
from .seeding import seed_everything
from .style import use_book_style

__all__ = ["KINDS", "Claim", "Ledger", "FullRun", "SCALES", "DEVICES", "BookParameterError", "Run", "setup", "progress",
           "seed_everything", "use_book_style", "start", "glue_quietly"]
