"""Group-sparse autoencoders for multimodal embeddings: the chapter chapters/multimodal-sae/ (Kaushik, Barch and
Fanelli, ICLR 2026).

Modules, one idea each:

- `captions`: scikit-learn's digits with synthetic captions and ground-truth attributes (02_experiments).
- `clip`: a tiny CLIP trained with InfoNCE and a learned temperature; the modality gap (02_experiments).
- `gsae`: the paired TopK SAE with per-modality pre-biases, the ℓ2,1 group loss and the shared cross-modal mask,
  M models stacked and trained together (01_theory).
- `metrics`: neurons by modality, paired-code cosine, FVU, zero-shot from codes, MMS (01_theory).
- `experiment`: one seed of the chapter's experiment and the dictionary-learning peer (02_experiments).
"""
from .captions import (CaptionedDigits, build_vocab, caption_tokens, digit_attributes, load_captioned_digits,
                       prompt_tokens)
from .clip import (TinyCLIP, dense_zero_shot, dense_zero_shot_hits, embed_pairs, embed_prompts, info_nce, modality_gap,
                   pack, train_clip)
from .experiment import (LAMBDAS, P_MASKS, SIZES, VARIANTS, Study, below_dense, dictionary_learning_peer,
                         paired_cosine_gain, run_study, zero_shot_gain)
from .gsae import PairedSAE, encode_pairs, train_paired
from .metrics import (UNIMODAL_SHARE, code_zero_shot, code_zero_shot_hits, mms, neuron_counts, pair_fvu, paired_cosine,
                      paired_cosines)

__all__ = ["CaptionedDigits", "build_vocab", "caption_tokens", "digit_attributes", "load_captioned_digits",
           "prompt_tokens", "TinyCLIP", "dense_zero_shot", "dense_zero_shot_hits", "embed_pairs", "embed_prompts",
           "info_nce", "modality_gap", "pack", "train_clip", "LAMBDAS", "P_MASKS", "SIZES", "VARIANTS", "Study",
           "below_dense", "dictionary_learning_peer", "paired_cosine_gain", "run_study", "zero_shot_gain", "PairedSAE",
           "encode_pairs", "train_paired", "UNIMODAL_SHARE", "code_zero_shot", "code_zero_shot_hits", "mms",
           "neuron_counts", "pair_fvu", "paired_cosine", "paired_cosines"]
