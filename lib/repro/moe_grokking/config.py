"""The configuration of the chapter's runs: model, optimiser and monitoring sizes, and the four variants.

Explained in chapters/moe-grokking/02_experiments.md.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..common import check_choice
from ..nn import TransformerConfig

__all__ = ["GrokkingConfig", "VARIANTS", "SHIPPED_VARIANTS", "variant_config"]


@dataclass
class GrokkingConfig:
    """The run of chapters/moe-grokking/02_experiments.md: model, optimiser and monitoring sizes."""

    d_model: int = 64
    n_layers: int = 4
    n_heads: int = 4
    n_experts: int = 8
    top_k: int = 2
    d_expert: int = 32
    lr: float = 2e-3
    weight_decay: float = 1.0
    balance_coef: float = 0.01
    batch_size: int = 512
    steps: int = 12000
    n_evals: int = 40
    n_monitor: int = 48
    freeze_router: bool = False
    dense: bool = False

    def model_config(self, vocab_size: int) -> TransformerConfig:
        """The transformer: MoE blocks, or with `dense=True` its dense twin, whose MLP is as wide as the top_k experts
        that a token uses (the same active parameters per token)."""
        sizes = dict(vocab_size=vocab_size, max_len=4, d_model=self.d_model, n_layers=self.n_layers,
                     n_heads=self.n_heads)
        if self.dense:
            return TransformerConfig(**sizes, d_mlp=self.top_k * self.d_expert)
        return TransformerConfig(**sizes, n_experts=self.n_experts, top_k=self.top_k, d_expert=self.d_expert)


#: The runs of the chapter: the MoE as configured, its routers frozen at initialisation, no balancing loss, and the
#: dense twin with the same active parameters per token.
VARIANTS = ("main", "frozen", "no-balance", "dense")

#: The runs that every reported seed ships (data/moe-grokking/runs/); the others (dense twin, no balancing loss) are
#: read when shipped and otherwise come from the recorded full run (chapters/moe-grokking/02_experiments.md says why).
SHIPPED_VARIANTS = ("main", "frozen")

_CHANGES = {"main": {}, "frozen": {"freeze_router": True}, "no-balance": {"balance_coef": 0.0},
            "dense": {"dense": True, "balance_coef": 0.0}}


def variant_config(cfg: GrokkingConfig, variant: str) -> GrokkingConfig:
    """`cfg` changed for one of `VARIANTS` (chapters/moe-grokking/02_experiments.md)."""
    check_choice("variant", variant, VARIANTS)
    return replace(cfg, **_CHANGES[variant])
