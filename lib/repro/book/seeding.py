"""One seeding function for the whole book (DESIGN.md §6). Used by every chapter through `repro.book.setup`."""
from __future__ import annotations

import random

import numpy as np


def seed_everything(seed: int) -> np.random.Generator:
    """Seed python's `random`, numpy's global generator and torch; return a fresh `np.random.Generator(seed)`.

    Library code should take a generator or a seed argument rather than rely on global state; this function exists
    so that notebook-level code (and libraries we call) is reproducible too.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    try:
        import torch
    except ImportError:  # torch is in the lock; this only keeps the function usable without it
        pass
    else:
        torch.manual_seed(seed)
    return np.random.default_rng(seed)
