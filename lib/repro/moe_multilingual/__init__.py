"""Multilingual routing in mixture-of-experts, in miniature: chapters/moe-multilingual/.

Modules, one idea each:

- `languages`: six synthetic languages rendered from one grammar of frames and problems (disjoint vocabularies,
  word orders, case markers, split nouns, resource shares);
- `corpus`: the training rows (monolingual text, parallel pairs, the arithmetic task) and the evaluation sets;
- `divergence`: routing distributions per sequence and their entropy-normalised Jensen–Shannon divergence;
- `experts`: task and language experts from shifts in expert usage, and their overlap by tau;
- `steering`: soft and hard steering of router logits in chosen layers, and task accuracy;
- `cka`: linear CKA, the representation-similarity peer;
- `training`: the model's config, its training and the shipped checkpoints;
- `analysis`: everything the experiments notebook computes from one trained model.
"""
from .cka import linear_cka
from .corpus import PAD, Corpus, CorpusConfig, make_corpus, pad_rows, sample_frames
from .divergence import divergence_by_layer, divergence_items, entropy, js_divergence, normalized_js, sequence_routing
from .experts import expert_counts, expert_fractions, expert_shift, experts_above, overlap_by_tau
from .languages import ASKS, DEFAULT_LANGUAGES, LanguageSpec, Lexicon, make_lexicon
from .steering import MODES, steer_fn, steered, task_correct
from .training import (SHIPPED_SEEDS, MultilingualConfig, build_corpus, checkpoint_path, load_model,
                       make_checkpoint, train_model)

__all__ = ["linear_cka", "PAD", "Corpus", "CorpusConfig", "make_corpus", "pad_rows", "sample_frames",
           "divergence_by_layer", "divergence_items", "entropy", "js_divergence", "normalized_js", "sequence_routing",
           "expert_counts", "expert_fractions", "expert_shift", "experts_above", "overlap_by_tau", "DEFAULT_LANGUAGES",
           "LanguageSpec", "Lexicon", "make_lexicon", "ASKS", "MODES", "steer_fn", "steered", "task_correct",
           "SHIPPED_SEEDS", "MultilingualConfig", "build_corpus", "checkpoint_path", "load_model",
           "make_checkpoint", "train_model"]
