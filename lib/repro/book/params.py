"""Scale, seed and device: the three parameters every notebook takes (DESIGN.md §5).

A notebook's first code cell after its `parameters` cell calls `setup(scale=scale, seed=seed, device=device)`, most
often through `repro.book.notebook.start`, which also makes the notebook's ledger and glues the chapter's full run.
`setup` validates the three values, seeds python/numpy/torch, sets the book's plot style and returns a `Run`.
Explained for readers in chapters/intro.md ("How to rerun").
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from ..common.threads import set_threads
from .seeding import seed_everything
from .style import use_book_style

SCALES = ("ci", "full")
DEVICES = ("cpu", "cuda")


class BookParameterError(ValueError):
    """A notebook parameter has a value the book does not know.

    In a notebook it shows as one short message instead of a traceback (IPython calls `_render_traceback_`).
    """

    def _render_traceback_(self):
        return [f"\x1b[31m{type(self).__name__}\x1b[0m: {self}"]


@dataclass(frozen=True)
class Run:
    """The validated parameters of one notebook run."""

    scale: str
    seed: int
    device: str

    def pick(self, **by_scale):
        """The value for this run's scale: `run.pick(ci=200, full=2000)`."""
        missing = [s for s in SCALES if s not in by_scale]
        unknown = [s for s in by_scale if s not in SCALES]
        if missing or unknown:
            raise BookParameterError(
                f"pick() needs exactly one value per scale {SCALES}; missing {missing}, unknown {unknown}")
        return by_scale[self.scale]

    @property
    def full(self) -> bool:
        """True at scale="full"."""
        return self.scale == "full"


def check_parameters(scale, seed, device) -> Run:
    """Validate `scale`, `seed`, `device` and return them as a `Run` (no side effects)."""
    if scale not in SCALES:
        raise BookParameterError(f"scale={scale!r} is not a scale of this book; use one of {', '.join(map(repr, SCALES))}")
    if device not in DEVICES:
        raise BookParameterError(f"device={device!r} is not supported; use one of {', '.join(map(repr, DEVICES))}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise BookParameterError(f"seed={seed!r} must be a non-negative integer")
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise BookParameterError("device='cuda' was asked for, but torch sees no CUDA GPU here; use device='cpu'")
    return Run(scale=scale, seed=seed, device=device)


def setup(scale="ci", seed=0, device="cpu") -> Run:
    """Validate the notebook's parameters, seed every generator, set threads and the plot style.

    Raises `BookParameterError` (a `ValueError`) naming the bad value and listing the valid ones.
    """
    run = check_parameters(scale, seed, device)
    threads = os.environ.get("REPRO_THREADS")
    if threads:
        set_threads(int(threads))
    seed_everything(run.seed)
    use_book_style()
    return run
