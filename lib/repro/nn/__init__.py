"""Neural-network substrate shared by several chapters (DESIGN.md §6).

Each module here has two chapters or more as clients (DESIGN.md §1; tests/unit/test_import_graph.py checks it); code
that one chapter uses lives in that chapter's package. Modules, one idea each:

- `transformer`: the book's small decoder-only transformer, dense or mixture-of-experts, and `MoESizes`, the MoE
  sizes a run's configuration carries (chapters/temporal-sae, chapters/moe-grokking, chapters/moe-multilingual).
- `moe`: the top-k router with renormalised gates and the load-balancing loss (chapters/moe-grokking).
- `sae`: the sparse-autoencoder family: TopK / BatchTopK, Matryoshka prefixes, the AuxK dead-latent loss, FVU and
  dead-fraction metrics (chapters/temporal-sae, chapters/multimodal-sae).
- `train`: next-token loss and the AdamW training loop (chapters/temporal-sae, chapters/moe-grokking).
- `classifier`: the minibatch cross-entropy fit of a classifier and its accuracy (chapters/transferability-benchmarks,
  chapters/timeseg, chapters/specgd, chapters/amortized-explainer, chapters/behavior-learning).
- `contrastive`: the symmetric InfoNCE loss of matched pairs (chapters/temporal-sae, chapters/multimodal-sae).
- `checkpoint`: small trained models with their provenance record under data/ (chapters/temporal-sae).
"""
from .checkpoint import load_checkpoint, save_checkpoint
from .classifier import classifier_accuracy, fit_classifier, fit_minibatches
from .contrastive import symmetric_info_nce
from .moe import MoEFeedForward, Routing, balance_loss, top_k_gates
from .sae import (SAE, SAEOutput, batch_topk_activation, dead_fraction, encode_all, evaluate_sae, fvu, l0,
                  reconstruction_cosine, topk_activation, train_sae)
from .train import lm_loss, train_lm
from .transformer import MoESizes, Transformer, TransformerConfig, TransformerOutput

__all__ = ["Transformer", "TransformerConfig", "TransformerOutput", "MoESizes", "fit_classifier", "fit_minibatches",
           "classifier_accuracy", "symmetric_info_nce", "MoEFeedForward", "Routing", "top_k_gates",
           "balance_loss", "SAE", "SAEOutput", "topk_activation", "batch_topk_activation", "train_sae",
           "evaluate_sae", "encode_all", "fvu", "reconstruction_cosine", "l0", "dead_fraction", "lm_loss", "train_lm", "save_checkpoint", "load_checkpoint"]
