"""The configuration of the chapter's runs: model, optimiser and monitoring sizes, and the four variants.

Explained in chapters/moe-grokking/02_experiments.md.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..common import check_choice
from ..nn import MoESizes, TransformerConfig

__all__ = ["GrokkingConfig", "VARIANTS", "SHIPPED_VARIANTS", "variant_config"]


@dataclass(frozen=True)
class GrokkingConfig(MoESizes):
    """The run of chapters/moe-grokking/02_experiments.md: the model's sizes (`repro.nn.MoESizes`), optimiser and
    monitoring sizes."""

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
        return self.transformer_config(vocab_size, max_len=4, dense=self.dense)


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
