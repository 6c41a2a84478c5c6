"""A stopwatch for the seconds that chapters report (how long a training run or a sweep took).

Explained in chapters/appendix/reproducibility.md. One context manager instead of a hand-written pair of
``time.perf_counter()`` calls at every timed step::

    with stopwatch() as watch:
        train(...)
    seconds["train"] = watch.seconds
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["Stopwatch", "stopwatch"]


@dataclass
class Stopwatch:
    """Seconds on the monotonic clock (`time.perf_counter`) since `start`; frozen at `stop`.
    Explained in chapters/appendix/reproducibility.md."""

    start: float
    end: float | None = None

    @property
    def seconds(self) -> float:
        """Elapsed seconds: up to now while running, up to `stop` after it."""
        return (time.perf_counter() if self.end is None else self.end) - self.start

    def stop(self) -> float:
        """Freeze the watch and return its seconds."""
        self.end = time.perf_counter()
        return self.seconds


@contextmanager
def stopwatch():
    """A running `Stopwatch` for the body of a ``with`` block, stopped when the block ends (also on an error).
    Explained in chapters/appendix/reproducibility.md."""
    watch = Stopwatch(time.perf_counter())
    try:
        yield watch
    finally:
        watch.stop()
