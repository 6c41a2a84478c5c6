"""Latent-trajectory signals for reasoning traces (Vilas et al., ICLR 2026), explained in
chapters/latent-trajectories/.

Modules, one idea each:

- `traces`: the noisy-teacher arithmetic language (questions, traces with wrong steps, CHECK/REDO detours and
  harmless verification lines) and its tokens (chapters/latent-trajectories/02_experiments.md);
- `model`: the book's dense transformer trained on it, batched sampling with a key-value cache, hidden states and
  next-token probabilities of finished traces (chapters/latent-trajectories/02_experiments.md).
"""
from .model import MAX_LEN, Samples, make_checkpoint, model_config, read_traces, sample, sample_questions, train_reasoner
from .traces import (TOKEN, VOCAB_SIZE, WORDS, Teacher, decode, draw_questions, encode, question_words,
                     teacher_batch, teacher_trace)
