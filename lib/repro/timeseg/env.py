"""TimeSeg's environment: masking, the variational CMI reward with its length penalty, and termination.

Explained in chapters/timeseg/01_theory.md. Notation: ``m`` (n, T) bool is the union of the segments chosen so far,
``x_m = m ⊙ x + (1 − m) ⊙ x̄`` with ``x̄`` each series' own temporal mean (the code's ``MeanMask``), ``ŷ = softmax
g(x)`` the black box's soft prediction on the clean input, and ``CE(m) = −Σ_c ŷ_c log softmax g(x_m)_c``.

- reward of step ``k`` (the official code's form, a difference of *likelihoods*):
  ``R_k = exp(−CE(m_{1:k})) − exp(−CE(m_{1:k−1})) − λ |s_k| / T``, the subtracted likelihood dropped at ``k = 1``;
  ``log_reward=True`` gives the paper's difference of log-likelihoods, ``CE(m_{1:k−1}) − CE(m_{1:k})`` (at ``k = 1``
  again without the subtracted term, i.e. ``−CE(m_1)``);
- termination after step ``k``: ``k = K_max``, or ``k ≥ 2`` and the relative gain
  ``(CE_{k−1} − CE_k) / CE_{k−1} < τ``;
- the objective of a finished explanation ``m``: ``J(m) = exp(−CE(m)) − λ |m| / T``, which is the sum of the
  rewards of its steps (the likelihoods telescope) when its segments do not overlap.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["mean_fill", "soft_target", "cross_entropy_on", "step_reward", "terminates", "objective",
           "segment_mask", "boundaries", "count_segments"]


def mean_fill(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``m ⊙ x + (1 − m) ⊙ x̄``: the kept time steps, the rest set to the series' own temporal mean.

    Explained in chapters/timeseg/01_theory.md.
    """
    if mask.shape != x.shape:
        raise ValueError(f"mask must have the shape of x {tuple(x.shape)}; got {tuple(mask.shape)}")
    return torch.where(mask, x, x.mean(-1, keepdim=True).expand_as(x))


@torch.no_grad()
def soft_target(model, x: torch.Tensor) -> torch.Tensor:
    """``ŷ = softmax g(x)``, the black box's own prediction as a soft target. Explained in
    chapters/timeseg/01_theory.md."""
    return torch.softmax(model(x), -1)


@torch.no_grad()
def cross_entropy_on(model, x: torch.Tensor, mask: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """``CE(m)`` per series: the cross-entropy of ``g(x_m)`` against the soft target. Explained in
    chapters/timeseg/01_theory.md."""
    return F.cross_entropy(model(mean_fill(x, mask)), target, reduction="none")


def step_reward(ce_new: torch.Tensor, ce_old, seg_len: torch.Tensor, length: int, lam: float,
                log_reward: bool = False) -> torch.Tensor:
    """``R_k``: the likelihood gain (or log-likelihood gain with ``log_reward``) minus ``λ |s_k| / T``;
    ``ce_old=None`` marks the first step, where the subtracted term is dropped.

    Explained in chapters/timeseg/01_theory.md.
    """
    if log_reward:
        gain = -ce_new if ce_old is None else ce_old - ce_new
    else:
        gain = torch.exp(-ce_new) if ce_old is None else torch.exp(-ce_new) - torch.exp(-ce_old)
    return gain - lam * seg_len.float() / length


def terminates(ce_new: torch.Tensor, ce_old, step: int, k_max: int, tau: float) -> torch.Tensor:
    """Whether the episode ends after step ``step`` (1-based): at ``K_max``, or when the relative CE gain of the
    step is below ``τ`` (never at step 1). Explained in chapters/timeseg/01_theory.md."""
    if step >= k_max:
        return torch.ones_like(ce_new, dtype=torch.bool)
    if ce_old is None:
        return torch.zeros_like(ce_new, dtype=torch.bool)
    return (ce_old - ce_new) / (ce_old + 1e-6) < tau


@torch.no_grad()
def objective(model, x: torch.Tensor, mask: torch.Tensor, target: torch.Tensor, lam: float) -> torch.Tensor:
    """``J(m) = exp(−CE(m)) − λ |m| / T`` per series: what TimeSeg's return and the greedy oracle maximise.

    Explained in chapters/timeseg/01_theory.md.
    """
    ce = cross_entropy_on(model, x, mask, target)
    return torch.exp(-ce) - lam * mask.float().mean(-1)


def segment_mask(start: torch.Tensor, end: torch.Tensor, length: int) -> torch.Tensor:
    """The mask ``(n, T)`` of the segments ``[start_i, end_i]`` (both ends included). Explained in
    chapters/timeseg/01_theory.md."""
    t = torch.arange(length)
    return (t[None, :] >= start[:, None]) & (t[None, :] <= end[:, None])


def boundaries(mask) -> torch.Tensor:
    """The number of changes ``m_t ≠ m_{t−1}`` along each series (a contiguous segment inside the series has 2).

    Explained in chapters/timeseg/02_experiments.md.
    """
    m = torch.as_tensor(mask).bool()
    return (m[:, 1:] != m[:, :-1]).sum(-1)


def count_segments(mask) -> torch.Tensor:
    """The number of maximal runs of True along each series. Explained in chapters/timeseg/02_experiments.md."""
    m = torch.as_tensor(mask).bool()
    starts = m[:, :1].long().squeeze(-1) + (m[:, 1:] & ~m[:, :-1]).sum(-1)
    return starts
