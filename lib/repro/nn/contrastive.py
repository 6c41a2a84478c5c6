"""The symmetric InfoNCE loss of matched pairs, shared by chapters/temporal-sae/ (adjacent tokens) and
chapters/multimodal-sae/ (an image and its caption, CLIP's loss).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["symmetric_info_nce"]


def symmetric_info_nce(logits: torch.Tensor) -> torch.Tensor:
    """The mean of the two cross-entropies of an (N, N) similarity matrix whose matched pairs are on the diagonal:
    each row must pick its own column among the batch's columns, and each column its own row,
    (CE(S, I) + CE(Sᵀ, I)) / 2. Explained in chapters/multimodal-sae/02_experiments.md and
    chapters/temporal-sae/01_theory.md."""
    if logits.ndim != 2 or logits.shape[0] != logits.shape[1]:
        raise ValueError(f"logits must be a square (N, N) matrix of pair similarities, got shape {tuple(logits.shape)}")
    target = torch.arange(logits.shape[0], device=logits.device)
    return 0.5 * (F.cross_entropy(logits, target) + F.cross_entropy(logits.t(), target))
