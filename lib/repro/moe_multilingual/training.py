"""Training the book's MoE transformer on the six-language corpus, and the shipped checkpoints of the chapter.

Explained in chapters/moe-multilingual/02_experiments.md ("The model"). The training takes minutes on two cores, more
than the chapter's ci budget, so the checkpoints of the development seed and of seeds 0, 1, 2 are shipped under
data/moe-multilingual/ with their provenance; at ci the chapter loads the seed's checkpoint and trains a few steps of
the same code to show it runs; at scale="full" it retrains from scratch. `python -m repro.book ship moe-multilingual
[--seed N]` remakes them (`ship`).
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import torch

from .. import DATA_DIR
from ..common import check_int, thread_limit
from ..nn import MoESizes, Transformer, TransformerConfig, load_checkpoint, save_checkpoint, train_lm
from ..nn.checkpoint import ship_command
from .corpus import PAD, Corpus, CorpusConfig, make_corpus
from .languages import make_lexicon

__all__ = ["MultilingualConfig", "build_corpus", "train_model", "checkpoint_path", "make_checkpoint",
           "load_model", "SHIPPED_SEEDS", "ship"]

SLUG = "moe-multilingual"
#: Seeds whose trained model is shipped: the three reported seeds.
SHIPPED_SEEDS = (0, 1, 2)


@dataclass(frozen=True)
class MultilingualConfig(MoESizes):
    """Model and optimiser sizes of the chapter's run: the MoE sizes of `repro.nn.MoESizes` with six blocks, and the
    optimiser's (chapters/moe-multilingual/02_experiments.md)."""
    n_layers: int = 6
    steps: int = 2000
    batch_size: int = 32
    lr: float = 3e-3
    warmup: int = 100
    balance_coef: float = 0.01
    weight_decay: float = 0.01

    def model_config(self, vocab_size: int, max_len: int) -> TransformerConfig:
        """The transformer of this run: every block an MoE."""
        return self.transformer_config(vocab_size, max_len)


def build_corpus(seed: int, corpus_cfg: CorpusConfig = CorpusConfig()) -> Corpus:
    """The chapter's six languages and their corpus for `seed` (chapters/moe-multilingual/01_theory.md)."""
    return make_corpus(make_lexicon(), corpus_cfg, seed=seed)


def train_model(corpus: Corpus, cfg: MultilingualConfig = MultilingualConfig(), seed: int = 0,
                steps: int | None = None) -> tuple[Transformer, dict]:
    """Train a fresh MoE transformer on `corpus` for `steps` (default `cfg.steps`) AdamW steps on one thread.

    Returns (model in eval mode, history {"loss", "seconds", "steps_per_second"}).
    Explained in chapters/moe-multilingual/02_experiments.md.
    """
    if not isinstance(corpus, Corpus):
        raise ValueError(f"corpus must be a Corpus, got {type(corpus).__name__}")
    steps = check_int("steps", cfg.steps if steps is None else steps)
    torch.manual_seed(seed)
    model = Transformer(cfg.model_config(corpus.lex.vocab_size, corpus.cfg.seq_len))
    rows = corpus.training_rows(steps * cfg.batch_size, seed=seed)
    B = cfg.batch_size

    def batches(step):
        tokens = rows[(step - 1) * B: step * B]
        return tokens, tokens != PAD

    with thread_limit(1):
        hist = train_lm(model, batches, steps, lr=cfg.lr, warmup=cfg.warmup, balance_coef=cfg.balance_coef,
                        weight_decay=cfg.weight_decay)
    hist["steps_per_second"] = steps / hist["seconds"]
    return model, hist


def checkpoint_path(seed: int):
    """Where the shipped model of `seed` lives (chapters/moe-multilingual/02_experiments.md)."""
    return DATA_DIR / SLUG / f"model-seed{check_int('seed', seed, 0)}.pt"


def make_checkpoint(seed: int, cfg: MultilingualConfig = MultilingualConfig()):
    """Train the model of `seed` and save it with its provenance (command, seed, config, seconds, steps/s).

    Run by `python -m repro.book ship moe-multilingual --seed SEED`. Explained in
    chapters/moe-multilingual/02_experiments.md.
    """
    corpus = build_corpus(seed)
    t0 = time.time()
    model, hist = train_model(corpus, cfg, seed=seed)
    return save_checkpoint(model, checkpoint_path(seed),
                           command=ship_command(SLUG, seed), seed=seed,
                           config=asdict(cfg), seconds=round(time.time() - t0, 1),
                           steps_per_second=round(hist["steps_per_second"], 2),
                           final_loss=round(float(sum(hist["loss"][-50:]) / 50), 4))


def load_model(seed: int) -> tuple[Transformer, dict]:
    """The shipped model of `seed` and its provenance (chapters/moe-multilingual/02_experiments.md)."""
    return load_checkpoint(checkpoint_path(seed), remake=ship_command(SLUG, seed))


def ship(seed: int | None = None) -> list:
    """Train and write the shipped model of `seed` (default: every seed of `SHIPPED_SEEDS`); returns the paths.

    `python -m repro.book ship moe-multilingual [--seed N]` calls it. Explained in
    chapters/moe-multilingual/02_experiments.md.
    """
    return [make_checkpoint(s) for s in (SHIPPED_SEEDS if seed is None else (check_int("seed", seed, 0),))]
