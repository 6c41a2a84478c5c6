"""The book's small decoder-only transformer: pre-LayerNorm, causal attention, dense or mixture-of-experts MLPs.

One module for every chapter that trains a language model on a synthetic language: chapters/temporal-sae (dense,
its residual stream feeds the sparse autoencoders), chapters/moe-grokking (MoE, its expert pathways are the monitored
signal), and later the multilingual-routing and latent-trajectory chapters. Sizes are tiny so it trains on 2 CPU cores.

A block is  x <- x + Attn(LN(x));  x <- x + FFN(LN(x)),  where FFN is a GELU MLP or `MoEFeedForward`.
`forward` returns the residual stream after every block (the "activations" that interpretability chapters read), and
for MoE blocks the router's logits, gates and choices.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, asdict

import torch
from torch import nn

from ..common import check_int
from .moe import DISPATCH, MoEFeedForward


@dataclass(frozen=True)
class TransformerConfig:
    """Sizes of the model. `n_experts=0` gives dense MLPs; `n_experts=E>0` gives MoE blocks with top-`top_k` routing
    in the blocks listed in `moe_layers` (default: all), their experts dispatched as `moe_dispatch` says ("dense" or
    "sparse": the same model, see `repro.nn.moe.DISPATCH`). Explained in chapters/moe-grokking/01_theory.md."""
    vocab_size: int
    max_len: int = 128
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    d_mlp: int | None = None
    n_experts: int = 0
    top_k: int = 1
    d_expert: int | None = None
    moe_layers: tuple[int, ...] | None = None
    moe_dispatch: str = "dense"

    def __post_init__(self):
        for name in ("vocab_size", "max_len", "d_model", "n_layers", "n_heads"):
            check_int(name, getattr(self, name))
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} must be divisible by n_heads={self.n_heads}")
        if self.n_experts < 0:
            raise ValueError(f"n_experts must be 0 (dense) or positive, got {self.n_experts}")
        if self.n_experts and not 1 <= self.top_k <= self.n_experts:
            raise ValueError(f"top_k must be between 1 and n_experts={self.n_experts}, got {self.top_k}")
        if self.moe_dispatch not in DISPATCH:
            raise ValueError(f"moe_dispatch must be one of {', '.join(DISPATCH)}, got {self.moe_dispatch!r}")
        if self.moe_layers is not None:
            object.__setattr__(self, "moe_layers", tuple(int(i) for i in self.moe_layers))
            bad = [i for i in self.moe_layers if not 0 <= i < self.n_layers]
            if bad:
                raise ValueError(f"moe_layers must index blocks 0..{self.n_layers - 1}, got {bad}")

    @property
    def mlp_width(self) -> int:
        return self.d_mlp or 4 * self.d_model

    def is_moe(self, block: int) -> bool:
        return self.n_experts > 0 and (self.moe_layers is None or block in self.moe_layers)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class MoESizes:
    """The sizes of the book's MoE transformer that a chapter's run configuration carries: width, depth, heads, and
    `n_experts` experts of width `d_expert`, `top_k` of them per token. A chapter's config inherits them as its first
    fields (flat: `cfg.d_model`), so its own defaults and `dataclasses.asdict` read as before.

    Explained in chapters/moe-grokking/02_experiments.md (also used by chapters/moe-multilingual).
    """
    d_model: int = 64
    n_layers: int = 4
    n_heads: int = 4
    n_experts: int = 8
    top_k: int = 2
    d_expert: int = 32

    def transformer_config(self, vocab_size: int, max_len: int, dense: bool = False) -> TransformerConfig:
        """The transformer of these sizes: MoE blocks, or with `dense=True` its dense twin, whose MLP is as wide as
        the `top_k` experts that a token uses (the same active parameters per token).

        Explained in chapters/moe-grokking/02_experiments.md.
        """
        sizes = dict(vocab_size=vocab_size, max_len=max_len, d_model=self.d_model, n_layers=self.n_layers,
                     n_heads=self.n_heads)
        if dense:
            return TransformerConfig(**sizes, d_mlp=self.top_k * self.d_expert)
        return TransformerConfig(**sizes, n_experts=self.n_experts, top_k=self.top_k, d_expert=self.d_expert)


@dataclass
class TransformerOutput:
    """What a forward pass returns; the router lists have one entry per MoE block, in block order.

    Explained in chapters/moe-grokking/01_theory.md.
    """
    logits: torch.Tensor
    residuals: list[torch.Tensor]
    router_logits: list[torch.Tensor] = field(default_factory=list)
    gates: list[torch.Tensor] = field(default_factory=list)
    experts: list[torch.Tensor] = field(default_factory=list)
    balance_loss: torch.Tensor | float = 0.0


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention in which each position attends to itself and the positions before it.

    Explained in chapters/moe-grokking/01_theory.md.
    """

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, D = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_heads, D // self.n_heads).permute(2, 0, 3, 1, 4)
        y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(B, T, D))


class Block(nn.Module):
    """One pre-LN block, x + attn(LN(x)) then + mlp(LN(x)); the MLP is dense or a mixture of experts, and the block
    returns its routing (None when dense). Explained in chapters/moe-grokking/01_theory.md."""

    def __init__(self, cfg: TransformerConfig, index: int):
        super().__init__()
        self.ln_attn, self.ln_mlp = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.attn = CausalSelfAttention(cfg.d_model, cfg.n_heads)
        self.is_moe = cfg.is_moe(index)
        if self.is_moe:
            self.mlp = MoEFeedForward(cfg.d_model, cfg.d_expert or cfg.mlp_width, cfg.n_experts, cfg.top_k,
                                      dispatch=cfg.moe_dispatch)
        else:
            self.mlp = nn.Sequential(nn.Linear(cfg.d_model, cfg.mlp_width), nn.GELU(),
                                     nn.Linear(cfg.mlp_width, cfg.d_model))

    def forward(self, x: torch.Tensor):
        x = x + self.attn(self.ln_attn(x))
        if self.is_moe:
            update, routing = self.mlp(self.ln_mlp(x))
            return x + update, routing
        return x + self.mlp(self.ln_mlp(x)), None


class Transformer(nn.Module):
    """Token and learned position embeddings, `n_layers` pre-LN blocks, a final LayerNorm and an unembedding.

    Explained in chapters/moe-grokking/01_theory.md.
    """

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        if not isinstance(cfg, TransformerConfig):
            raise ValueError(f"cfg must be a TransformerConfig, got {type(cfg).__name__}")
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos = nn.Embedding(cfg.max_len, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg, i) for i in range(cfg.n_layers))
        self.ln_final = nn.LayerNorm(cfg.d_model)
        self.unembed = nn.Linear(cfg.d_model, cfg.vocab_size)
        nn.init.normal_(self.embed.weight, std=0.02)
        nn.init.normal_(self.pos.weight, std=0.02)

    @property
    def moe_blocks(self) -> list[int]:
        """Indices of the blocks whose MLP is a mixture of experts."""
        return [i for i, b in enumerate(self.blocks) if b.is_moe]

    def forward(self, tokens: torch.Tensor) -> TransformerOutput:
        tokens = self._check_tokens(tokens)
        x = self.embed(tokens) + self.pos(torch.arange(tokens.shape[1], device=tokens.device))
        out = TransformerOutput(logits=None, residuals=[x])
        balance = []
        for block in self.blocks:
            x, routing = block(x)
            out.residuals.append(x)
            if routing is not None:
                out.router_logits.append(routing.logits)
                out.gates.append(routing.gates)
                out.experts.append(routing.experts)
                balance.append(routing.balance_loss)
        out.logits = self.unembed(self.ln_final(x))
        out.balance_loss = torch.stack(balance).mean() if balance else torch.zeros((), device=x.device)
        return out

    def _check_tokens(self, tokens) -> torch.Tensor:
        if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2:
            raise ValueError(f"tokens must be a (batch, length) integer tensor, got "
                             f"{getattr(tokens, 'shape', type(tokens).__name__)}")
        if tokens.dtype not in (torch.int64, torch.int32):
            raise ValueError(f"tokens must be integers, got dtype {tokens.dtype}")
        if tokens.shape[1] > self.cfg.max_len:
            raise ValueError(f"sequence length {tokens.shape[1]} exceeds max_len={self.cfg.max_len}")
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= self.cfg.vocab_size):
            raise ValueError(f"token ids must lie in [0, {self.cfg.vocab_size}), got "
                             f"[{int(tokens.min())}, {int(tokens.max())}]")
        return tokens.long()

    @contextlib.contextmanager
    def steer_router(self, block: int, fn):
        """Within the `with` body, block `block`'s router logits pass through `fn(logits) -> logits` before top-k."""
        if block not in self.moe_blocks:
            raise ValueError(f"block {block} has no router; MoE blocks are {self.moe_blocks}")
        if not callable(fn):
            raise ValueError("fn must be callable: router logits (..., E) -> logits (..., E)")
        moe = self.blocks[block].mlp
        previous, moe.steer = moe.steer, fn
        try:
            yield self
        finally:
            moe.steer = previous

    def freeze_routers(self) -> None:
        """Stop every router from training (the frozen-random-router ablation of chapters/moe-grokking)."""
        if not self.moe_blocks:
            raise ValueError("this model has no routers to freeze (n_experts=0)")
        for i in self.moe_blocks:
            self.blocks[i].mlp.router.weight.requires_grad_(False)
