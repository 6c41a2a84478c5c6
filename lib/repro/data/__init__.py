"""Synthetic data generators shared by several chapters (DESIGN.md §6).

- :mod:`.hmm_lda`  a toy language with ground truth at every token (topic, syntactic state, document), after
  HMM-LDA (Griffiths et al. 2004); explained in chapters/temporal-sae/01_theory.
- :mod:`.grokking_mix`  groups of modular-arithmetic facts that memorize and generalize at different times, plus a
  random-label control group; explained in chapters/moe-grokking/01_theory.
"""
from .grokking_mix import DEFAULT_GROUPS, OPERATIONS, GrokkingMix, answer_mask, make_grokking_mix
from .hmm_lda import STATES, Corpus, Vocabulary, make_corpus, make_vocabulary

__all__ = ["DEFAULT_GROUPS", "OPERATIONS", "GrokkingMix", "answer_mask", "make_grokking_mix", "STATES", "Corpus", "Vocabulary", "make_corpus", "make_vocabulary"]
