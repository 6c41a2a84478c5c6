"""Synthetic data generators shared by several chapters (DESIGN.md §6).

Used by chapters/temporal-sae/ (`hmm_lda`) and chapters/moe-grokking/ (`grokking_mix`); each generator has one user
today and is here because generators live in `repro.data` (DESIGN.md §6), ready for the next chapter that needs one.

- :mod:`.hmm_lda`  a toy language with ground truth at every token (topic, syntactic state, document), after
  HMM-LDA (Griffiths et al. 2004); explained in chapters/temporal-sae/01_theory.
- :mod:`.grokking_mix`  groups of modular-arithmetic facts that memorize and generalize at different times, plus a
  random-label control group; explained in chapters/moe-grokking/01_theory.
"""
from .grokking_mix import DEFAULT_GROUPS, OPERATIONS, GrokkingMix, answer_mask, make_grokking_mix
from .hmm_lda import STATES, Corpus, Vocabulary, make_corpus, make_vocabulary

__all__ = ["DEFAULT_GROUPS", "OPERATIONS", "GrokkingMix", "answer_mask", "make_grokking_mix", "STATES", "Corpus", "Vocabulary", "make_corpus", "make_vocabulary"]
