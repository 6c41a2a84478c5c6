"""Neural-network substrate shared by several chapters (DESIGN.md §6).

Used by chapters/temporal-sae/ and chapters/moe-grokking/ (the transformer and its trainer, both); the SAE family is
meant for the later SAE chapters. Modules, one idea each:

- `transformer`: the book's small decoder-only transformer, dense or mixture-of-experts (chapters/temporal-sae,
  chapters/moe-grokking).
- `moe`: the top-k router with renormalised gates and the load-balancing loss (chapters/moe-grokking).
- `sae`: the sparse-autoencoder family: TopK / BatchTopK, Matryoshka prefixes, the AuxK dead-latent loss, FVU and
  dead-fraction metrics (chapters/temporal-sae).
- `train`: next-token loss and the AdamW training loop (chapters/temporal-sae, chapters/moe-grokking).
- `checkpoint`: small trained models with their provenance record under data/ (chapters/temporal-sae).
"""
from .checkpoint import load_checkpoint, save_checkpoint
from .moe import MoEFeedForward, Routing, balance_loss, top_k_gates
from .sae import (SAE, SAEOutput, batch_topk_activation, dead_fraction, encode_all, evaluate_sae, fvu, l0,
                  reconstruction_cosine, topk_activation, train_sae)
from .train import lm_loss, train_lm
from .transformer import Transformer, TransformerConfig, TransformerOutput

__all__ = ["Transformer", "TransformerConfig", "TransformerOutput", "MoEFeedForward", "Routing", "top_k_gates",
           "balance_loss", "SAE", "SAEOutput", "topk_activation", "batch_topk_activation", "train_sae",
           "evaluate_sae", "encode_all", "fvu", "reconstruction_cosine", "l0", "dead_fraction", "lm_loss", "train_lm", "save_checkpoint", "load_checkpoint"]
