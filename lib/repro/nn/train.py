"""Training a language model: the next-token loss and one small AdamW loop shared by every chapter.

Used by chapters/temporal-sae (training the transformer whose activations the SAEs read) and chapters/moe-grokking
(training the MoE through memorization to generalization).
"""
from __future__ import annotations

from typing import Callable

import torch
from torch import nn

from ..common.progress import progress
from ..common import check_int
from ..common.timing import stopwatch


def lm_loss(logits: torch.Tensor, tokens: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Mean next-token cross-entropy: logits at position t predict tokens[t+1].

    `mask` (batch, length), bool, marks which *target* positions count (position 0 is never a target); with no mask
    every position from 1 on counts.
    Explained in chapters/temporal-sae/02_experiments.md.
    """
    if logits.dim() != 3 or tokens.shape != logits.shape[:2]:
        raise ValueError(f"logits must be (batch, length, vocab) and tokens (batch, length); got "
                         f"{tuple(logits.shape)} and {tuple(tokens.shape)}")
    losses = nn.functional.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:], reduction="none")
    if mask is None:
        return losses.mean()
    if mask.shape != tokens.shape:
        raise ValueError(f"mask must have the tokens' shape {tuple(tokens.shape)}, got {tuple(mask.shape)}")
    target_mask = mask[:, 1:].to(losses.dtype)
    if target_mask.sum() == 0:
        raise ValueError("mask selects no target position")
    return (losses * target_mask).sum() / target_mask.sum()


def _unpack(batch, mask_fn):
    tokens, mask = batch if isinstance(batch, tuple) else (batch, None)
    if mask is None and mask_fn is not None:
        mask = mask_fn(tokens)
    return tokens, mask


def train_lm(model: nn.Module, batches: Callable[[int], torch.Tensor], steps: int, *, lr: float = 3e-3,
             weight_decay: float = 0.0, balance_coef: float = 0.01, grad_clip: float | None = 1.0, warmup: int = 0,
             mask_fn: Callable | None = None, callback: Callable | None = None, betas=(0.9, 0.98)) -> dict:
    """Train `model` for `steps` AdamW steps on `batches(step)` (tokens, or a (tokens, mask) pair).

    The loss is `lm_loss + balance_coef * out.balance_loss` (the balancing term is 0 for a dense model). The learning
    rate ramps up linearly over `warmup` steps and then stays constant. `callback(step, model, loss)` runs after each
    step (step counts from 1), e.g. to evaluate at chosen steps. Returns {"loss": per-step losses, "seconds": time}.
    Explained in chapters/temporal-sae/02_experiments.md.
    """
    if not callable(batches):
        raise ValueError("batches must be a callable step -> tokens (or (tokens, mask))")
    check_int("steps", steps)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, betas=betas)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warmup) if warmup else 1.0)
    losses = []
    with stopwatch() as watch:
        model.train()
        for step in progress(range(1, int(steps) + 1), desc="training", total=int(steps)):
            tokens, mask = _unpack(batches(step), mask_fn)
            out = model(tokens)
            loss = lm_loss(out.logits, tokens, mask) + balance_coef * out.balance_loss
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if grad_clip:
                nn.utils.clip_grad_norm_(params, grad_clip)
            opt.step()
            sched.step()
            losses.append(loss.item())
            if callback is not None:
                callback(step, model, losses[-1])
        model.eval()
    return {"loss": losses, "seconds": watch.seconds}
