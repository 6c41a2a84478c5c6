"""Task experts and language experts: which experts a kind of text uses more than English text does.

Explained in chapters/moe-multilingual/01_theory.md ("Task and language experts"). At layer j, f_D(k) is the fraction
of D's tokens that have expert k among their top-k; the shift is Delta_k = f_D(k) - f_base(k), with base = English
sentences. Task experts: Delta_k > tau with D = English arithmetic text. Language experts: Delta_k > tau for at least
one non-English language's sentences.
"""
from __future__ import annotations

import numpy as np
import torch

from ..common import check_between

__all__ = ["expert_fractions", "expert_counts", "expert_shift", "experts_above", "overlap_by_tau"]


def expert_fractions(experts: list[torch.Tensor], mask: torch.Tensor, n_experts: int) -> np.ndarray:
    """f[j, k]: the fraction of masked tokens whose top-k at MoE layer j holds expert k; `experts` is the model
    output's list of (batch, length, k) choices. Explained in chapters/moe-multilingual/01_theory.md."""
    if not experts:
        raise ValueError("experts must list at least one layer's choices")
    m = mask.reshape(-1)
    if m.sum() == 0:
        raise ValueError("mask selects no token")
    rows = []
    for ch in experts:
        hot = torch.zeros(*ch.shape[:2], n_experts).scatter(-1, ch, 1.0).reshape(-1, n_experts)
        rows.append(hot[m].mean(0).numpy())
    return np.stack(rows)


def expert_counts(experts: list[torch.Tensor], mask: torch.Tensor, n_experts: int) -> tuple[np.ndarray, np.ndarray]:
    """Per sequence: hits[i, j, k], the number of its masked tokens whose top-k at MoE layer j holds expert k, and
    tokens[i], its number of masked tokens. `expert_fractions` is hits.sum(0) / tokens.sum(); resampling the sequences
    gives its bootstrap. Explained in chapters/moe-multilingual/02_experiments.md."""
    if not experts:
        raise ValueError("experts must list at least one layer's choices")
    m = mask.to(torch.float64)
    if m.sum() == 0:
        raise ValueError("mask selects no token")
    hits = [(torch.zeros(*ch.shape[:2], n_experts, dtype=torch.float64).scatter(-1, ch, 1.0) * m.unsqueeze(-1)).sum(1)
            for ch in experts]
    return torch.stack(hits, 1).numpy(), m.sum(1).numpy()


def expert_shift(f_data: np.ndarray, f_base: np.ndarray) -> np.ndarray:
    """Delta[j, k] = f_D(k) - f_base(k) at every layer. Explained in chapters/moe-multilingual/01_theory.md."""
    f_data, f_base = np.asarray(f_data, float), np.asarray(f_base, float)
    if f_data.shape != f_base.shape:
        raise ValueError(f"f_data and f_base must have the same shape, got {f_data.shape} and {f_base.shape}")
    return f_data - f_base


def experts_above(shift: np.ndarray, tau: float) -> set[tuple[int, int]]:
    """The (layer, expert) pairs whose shift exceeds `tau`; `shift` is (layers, E) or (sources, layers, E), where a
    pair counts when any source exceeds tau. Explained in chapters/moe-multilingual/01_theory.md."""
    check_between("tau", tau, -1, 1, closed="both")
    s = np.asarray(shift, float)
    if s.ndim == 3:
        s = s.max(0)
    if s.ndim != 2:
        raise ValueError(f"shift must be (layers, E) or (sources, layers, E), got shape {s.shape}")
    return {(int(j), int(k)) for j, k in zip(*np.nonzero(s > tau))}


def overlap_by_tau(task_shift: np.ndarray, language_shift: np.ndarray, taus) -> np.ndarray:
    """For each tau: (number of task experts, number of language experts, size of their intersection).

    Explained in chapters/moe-multilingual/01_theory.md.
    """
    out = []
    for tau in taus:
        t, l = experts_above(task_shift, tau), experts_above(language_shift, tau)
        out.append((len(t), len(l), len(t & l)))
    return np.array(out, dtype=int)
