"""Steering the router: push chosen experts' logits up (soft), force them on or off (hard), in chosen layers.

Explained in chapters/moe-multilingual/01_theory.md ("Steering"). For a token with router logits z (E values):

- soft:  z_k <- z_k + lambda * sd(z) for k in S  (sd over the token's E logits; the paper's lambda = 0.5);
- on:    z_k <- max(z) + |eps|, eps ~ N(0, 1e-6)  (forced into the top-k; eps breaks ties among them);
- off:   z_k <- min(z) - 1  (forced out of the top-k: "deactivation").

The book's transformer applies such a function to one block's logits inside `model.steer_router(block, fn)`;
`steered` stacks one per layer. Accuracy on the task is the argmax over the language's noun stems at the answer
position.
"""
from __future__ import annotations

import contextlib

import numpy as np
import torch

from ..common import check_choice

__all__ = ["MODES", "steer_fn", "steered", "task_correct"]

MODES = ("soft", "on", "off")


def steer_fn(experts, mode: str = "soft", lam: float = 0.5, seed: int = 0):
    """The function logits -> steered logits for the expert indices `experts` (chapters/moe-multilingual/01_theory.md)."""
    check_choice("mode", mode, MODES)
    idx = torch.as_tensor(sorted(int(e) for e in experts), dtype=torch.long)
    if idx.numel() == 0:
        raise ValueError("experts must name at least one expert")
    gen = torch.Generator().manual_seed(seed)

    def fn(z: torch.Tensor) -> torch.Tensor:
        if int(idx.max()) >= z.shape[-1]:
            raise ValueError(f"expert index {int(idx.max())} out of range for {z.shape[-1]} experts")
        z = z.clone()
        if mode == "soft":
            z[..., idx] += lam * z.std(-1, keepdim=True)
        elif mode == "on":
            eps = torch.randn(*z.shape[:-1], len(idx), generator=gen) * 1e-3   # sd = sqrt(1e-6)
            z[..., idx] = z.max(-1, keepdim=True).values + eps.abs() + 1e-6
        else:
            z[..., idx] = z.min(-1, keepdim=True).values - 1.0
        return z

    return fn


@contextlib.contextmanager
def steered(model, plan: dict, mode: str = "soft", lam: float = 0.5, seed: int = 0):
    """Within the body, steer block j's router toward the experts `plan[j]` (a {block: experts} dict; an empty plan
    steers nothing). Explained in chapters/moe-multilingual/01_theory.md."""
    if not isinstance(plan, dict):
        raise ValueError(f"plan must be a dict {{block: experts}}, got {type(plan).__name__}")
    with contextlib.ExitStack() as stack:
        for j, ex in plan.items():
            if len(ex):
                stack.enter_context(model.steer_router(int(j), steer_fn(ex, mode, lam, seed + int(j))))
        yield model


@torch.no_grad()
def task_correct(model, prompts: torch.Tensor, last, answers, candidates) -> np.ndarray:
    """Per prompt, whether the argmax over the `candidates` tokens (the language's noun stems) of the next-token
    logits at position `last` is the answer's index. Explained in chapters/moe-multilingual/01_theory.md."""
    answers, last = np.asarray(answers), torch.as_tensor(np.asarray(last))
    if prompts.dim() != 2 or len(answers) != len(prompts) or len(last) != len(prompts):
        raise ValueError("prompts must be (n, length), last and answers (n,)")
    logits = model(prompts).logits[torch.arange(len(prompts)), last]
    return logits[:, torch.as_tensor(np.asarray(candidates))].argmax(-1).numpy() == answers
