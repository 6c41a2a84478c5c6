"""The greedy oracle: TimeSeg's objective maximised by enumeration, one segment at a time, with no learning.

Explained in chapters/timeseg/02_experiments.md. At each step it scores every candidate segment ``[s, e]`` on a grid
of ``stride`` time steps that does not overlap the segments already chosen, by the objective of the union,
``J(m ∪ [s, e]) = exp(−CE) − λ |m ∪ [s, e]| / T``, keeps the best, and stops when no candidate raises ``J`` or after
``max_segments``. With ``stride = 1`` this is exact greedy over all ``O(T²)`` segments; coarser grids trade
resolution for ``stride²`` less work.
"""
from __future__ import annotations


import numpy as np
import torch

from ..common.checks import check_int, check_non_negative
from ..common.timing import stopwatch
from .env import cross_entropy_on, objective, soft_target

__all__ = ["candidate_segments", "greedy_oracle"]


def candidate_segments(length: int, stride: int) -> torch.Tensor:
    """All ``(start, end)`` pairs on the grid: starts ``0, stride, 2·stride, …``, ends ``start + j·stride − 1``
    (the last one clipped to ``T − 1``). Explained in chapters/timeseg/02_experiments.md."""
    length, stride = check_int("length", length), check_int("stride", stride)
    starts = list(range(0, length, stride))
    pairs = [(s, min(e, length - 1)) for s in starts for e in range(s + stride - 1, length + stride - 1, stride)]
    return torch.tensor(sorted(set(pairs)), dtype=torch.long)


@torch.no_grad()
def greedy_oracle(model, x, lam: float, max_segments: int, stride: int = 5, batch: int = 4096):
    """``(masks, n_segments, J, seconds per series)`` of the greedy oracle on the series ``x``.

    Explained in chapters/timeseg/02_experiments.md.
    """
    x = torch.as_tensor(np.asarray(x), dtype=torch.float32)
    lam = check_non_negative("lam", lam)
    max_segments = check_int("max_segments", max_segments)
    n, length = x.shape
    cand = candidate_segments(length, stride)
    t = torch.arange(length)
    seg = (t[None] >= cand[:, :1]) & (t[None] <= cand[:, 1:])          # (C, T)
    with stopwatch() as watch:
        target = soft_target(model, x)
        masks = torch.zeros(n, length, dtype=torch.bool)
        best_j = torch.full((n,), -float("inf"))
        n_seg = torch.zeros(n, dtype=torch.long)
        active = torch.ones(n, dtype=torch.bool)
        for _ in range(max_segments):
            for i in active.nonzero()[:, 0].tolist():
                ok = ~(seg & masks[i]).any(1)
                if not bool(ok.any()):
                    active[i] = False
                    continue
                cm = masks[i] | seg[ok]
                xs = x[i].expand(cm.shape[0], length)
                ce = torch.cat([cross_entropy_on(model, xs[s:s + batch], cm[s:s + batch],
                                                 target[i].expand(min(batch, cm.shape[0] - s), -1))
                                for s in range(0, cm.shape[0], batch)])
                j = torch.exp(-ce) - lam * cm.float().mean(-1)
                b = int(j.argmax())
                if float(j[b]) > float(best_j[i]):
                    masks[i], best_j[i] = cm[b], j[b]
                    n_seg[i] += 1
                else:
                    active[i] = False
            if not bool(active.any()):
                break
    seconds = watch.seconds / n
    return masks, n_seg, objective(model, x, masks, target, lam), seconds
