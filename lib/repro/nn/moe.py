"""A mixture-of-experts feed-forward layer: top-k softmax router, renormalised gates, load balancing.

Used by the book's transformer (`repro.nn.transformer`) when `n_experts > 0`; explained in
chapters/moe-grokking/01_theory, and used again by the chapters on multilingual routing and latent trajectories.

Notation: a token's residual vector x (d); router logits r = W_r x (E); probabilities p = softmax(r); the top-k
experts K(x); gates g_e = p_e / sum_{j in K(x)} p_j for e in K(x) and 0 otherwise; output sum_e g_e * MLP_e(x).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import torch
from torch import nn


class Routing(NamedTuple):
    """What the router decided for a batch of tokens (all shaped like the input's leading dims).

    Explained in chapters/moe-grokking/01_theory.md.
    """
    logits: torch.Tensor    # (..., E) router logits, after steering
    gates: torch.Tensor     # (..., E) renormalised top-k gates, zeros off the top-k
    experts: torch.Tensor   # (..., k) chosen experts, highest gate first
    balance_loss: torch.Tensor  # scalar


def top_k_gates(logits: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Softmax over the last axis, keep the k largest, renormalise them to sum to 1.

    Returns (gates with zeros outside the top k, indices of the top k in decreasing order).
    Explained in chapters/moe-grokking/01_theory.md.
    """
    if not 1 <= k <= logits.shape[-1]:
        raise ValueError(f"top_k must be between 1 and the number of experts ({logits.shape[-1]}), got {k}")
    probs = torch.softmax(logits, dim=-1)
    top_p, top_i = probs.topk(k, dim=-1)
    gates = torch.zeros_like(probs).scatter(-1, top_i, top_p / top_p.sum(-1, keepdim=True))
    return gates, top_i


def balance_loss(logits: torch.Tensor, experts: torch.Tensor) -> torch.Tensor:
    """Switch-Transformer load-balancing loss E * sum_e f_e P_e (equals 1 when routing is uniform).

    f_e is the fraction of (token, slot) assignments that went to expert e, P_e the mean router probability of e.
    Explained in chapters/moe-grokking/01_theory.md.
    """
    n_experts = logits.shape[-1]
    probs = torch.softmax(logits, dim=-1).reshape(-1, n_experts)
    counts = torch.bincount(experts.reshape(-1), minlength=n_experts).to(probs.dtype)
    fraction = counts / counts.sum()
    return n_experts * (fraction * probs.mean(0)).sum()


#: How the experts see the tokens: "dense" runs every expert on every token and lets the gates zero the unchosen
#: ones (one batched einsum); "sparse" runs each expert on its chosen tokens only (top_k / E of the expert work).
DISPATCH = ("dense", "sparse")


class MoEFeedForward(nn.Module):
    """E expert MLPs (d -> d_expert -> d, GELU) behind a linear router.

    `dispatch` (see `DISPATCH`): both give the same outputs (the unchosen experts' gates are exactly zero) and the same
    gradients up to float rounding; "sparse" is several times faster at top-2 of 8 experts.
    Explained in chapters/moe-grokking/01_theory.md.
    """

    def __init__(self, d_model: int, d_expert: int, n_experts: int, top_k: int, dispatch: str = "dense"):
        super().__init__()
        if dispatch not in DISPATCH:
            raise ValueError(f"dispatch must be one of {', '.join(DISPATCH)}, got {dispatch!r}")
        self.dispatch = dispatch
        if n_experts < 1:
            raise ValueError(f"n_experts must be at least 1, got {n_experts}")
        if not 1 <= top_k <= n_experts:
            raise ValueError(f"top_k must be between 1 and n_experts={n_experts}, got {top_k}")
        self.n_experts, self.top_k = n_experts, top_k
        self.router = nn.Linear(d_model, n_experts, bias=False)
        scale_in, scale_out = d_model ** -0.5, d_expert ** -0.5
        self.w_in = nn.Parameter(torch.randn(n_experts, d_model, d_expert) * scale_in)
        self.b_in = nn.Parameter(torch.zeros(n_experts, d_expert))
        self.w_out = nn.Parameter(torch.randn(n_experts, d_expert, d_model) * scale_out)
        self.b_out = nn.Parameter(torch.zeros(n_experts, d_model))
        self.steer: Callable[[torch.Tensor], torch.Tensor] | None = None

    def route(self, x: torch.Tensor) -> Routing:
        logits = self.router(x)
        if self.steer is not None:
            logits = self.steer(logits)
        gates, experts = top_k_gates(logits, self.top_k)
        return Routing(logits, gates, experts, balance_loss(logits, experts))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, Routing]:
        routing = self.route(x)
        if self.dispatch == "sparse":
            return self._sparse(x, routing), routing
        # Every expert sees every token (cheap at the book's sizes, and exact); the gates zero the unchosen ones.
        hidden = torch.nn.functional.gelu(torch.einsum("...d,edh->...eh", x, self.w_in) + self.b_in)
        outputs = torch.einsum("...eh,ehd->...ed", hidden, self.w_out) + self.b_out
        return torch.einsum("...e,...ed->...d", routing.gates, outputs), routing

    def _sparse(self, x: torch.Tensor, routing: Routing) -> torch.Tensor:
        """Each expert on the tokens that chose it, weighted by its gate, summed back in place."""
        flat = x.reshape(-1, x.shape[-1])
        chosen = routing.experts.reshape(-1, self.top_k)
        gates = routing.gates.reshape(-1, self.n_experts)
        out = torch.zeros_like(flat)
        for e in range(self.n_experts):
            tokens = (chosen == e).any(-1).nonzero(as_tuple=True)[0]
            if tokens.numel():
                hidden = torch.nn.functional.gelu(flat[tokens] @ self.w_in[e] + self.b_in[e])
                out = out.index_add(0, tokens, gates[tokens, e, None] * (hidden @ self.w_out[e] + self.b_out[e]))
        return out.view_as(x)
