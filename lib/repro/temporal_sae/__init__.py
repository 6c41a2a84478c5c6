"""Temporal sparse autoencoders (Bhalla, Oesterling et al., ICLR 2026): a Matryoshka SAE whose high-level latents
agree across adjacent tokens, trained and probed on a synthetic language with ground truth at every token.

Explained in chapters/temporal-sae/ (01_theory, 02_experiments). The SAE family itself lives in `repro.nn.sae`.
Modules, one idea each:

- :mod:`.hmm_lda`  the synthetic language after HMM-LDA (Griffiths et al. 2004): a slow topic per document, a fast
  syntactic state per token, and the document, known at every token (chapters/temporal-sae/01_theory);
- :mod:`.tsae`     the temporal contrastive loss, T-SAE training, the language model whose residual stream the SAEs
  read, the probes and the SAELens peer.
"""
from .hmm_lda import STATES, Corpus, Vocabulary, make_corpus, make_vocabulary
from .tsae import (LM_CONFIG, PARTNERS, READINGS, activations, adjacent_cosine, codes, contrastive_loss,
                   latent_labels, mutual_information, pair_batches, probe_accuracy, probe_hits, probe_splits,
                   probe_suite, saelens_batchtopk, sparse_latents, sparse_probe_accuracy, sparse_probe_hits,
                   standardize, temporal_loss, train_language_model, train_tsae)

__all__ = ["STATES", "Corpus", "Vocabulary", "make_corpus", "make_vocabulary",
           "LM_CONFIG", "PARTNERS", "READINGS", "activations", "adjacent_cosine", "codes", "contrastive_loss",
           "latent_labels", "mutual_information", "pair_batches", "probe_accuracy", "probe_hits", "probe_splits",
           "probe_suite", "saelens_batchtopk", "sparse_latents", "sparse_probe_accuracy", "sparse_probe_hits",
           "standardize", "temporal_loss", "train_language_model", "train_tsae"]
