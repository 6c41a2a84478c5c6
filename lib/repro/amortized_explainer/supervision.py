"""The supervision signal: prior explanations, deduplicated by cosine similarity and filtered by the ten metrics.

Explained in chapters/amortized-explainer/01_theory.md (why filtering with the evaluation metrics risks training on
the test) and 02_experiments.md. Per input: a map whose cosine with an earlier kept map is at least δ is dropped
(greedy, keep-first, in the order of ``PRIORS``); each surviving map is scored on every metric, and it is kept only
if it reaches the p-quantile of the surviving maps on every metric (the (1 − p)-quantile, from below, where lower is
better).
"""
from __future__ import annotations

import torch

from .faithfulness.metrics import HIGHER_IS_BETTER, METRICS
from ..common.checks import check_between

__all__ = ["dedup", "filter_maps", "pool"]


def dedup(maps: torch.Tensor, delta: float = 0.6) -> torch.Tensor:
    """Keep mask ``(n, K)`` of maps ``(n, K, G)``: map k survives unless its cosine with a kept map j < k is ≥ δ.

    Explained in chapters/amortized-explainer/02_experiments.md.
    """
    delta = check_between("delta", delta, -1.0, 1.0, closed="right")
    if maps.ndim != 3:
        raise ValueError(f"maps must have shape (n, K, G); got {tuple(maps.shape)}")
    unit = maps / maps.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    cos = unit @ unit.transpose(1, 2)                                  # (n, K, K)
    keep = torch.ones(maps.shape[:2], dtype=torch.bool)
    for k in range(1, maps.shape[1]):
        earlier = keep[:, :k] & (cos[:, k, :k] >= delta)
        keep[:, k] = ~earlier.any(1)
    return keep


def filter_maps(scores: dict, keep: torch.Tensor, p: float = 0.2, metrics=METRICS) -> torch.Tensor:
    """Keep mask ``(n, K)``: survivors of ``keep`` that pass every metric's per-input p-quantile threshold.

    Explained in chapters/amortized-explainer/02_experiments.md. ``scores[metric]`` is ``(n, K)``, the metric of
    each map of each input.
    """
    p = check_between("p", p, 0.0, 1.0, closed="left")
    out = keep.clone()
    for m in metrics:
        v = scores[m].masked_fill(~keep, float("nan"))
        if HIGHER_IS_BETTER[m]:
            out &= v >= torch.nanquantile(v, p, dim=1, keepdim=True)
        else:
            out &= v <= torch.nanquantile(v, 1 - p, dim=1, keepdim=True)
    return out


def pool(maps: torch.Tensor, keep: torch.Tensor) -> list:
    """The supervision pool Z as a list, one ``(r, G)`` tensor of kept maps per input.

    Explained in chapters/amortized-explainer/02_experiments.md.
    """
    return [maps[i][keep[i]] for i in range(maps.shape[0])]
