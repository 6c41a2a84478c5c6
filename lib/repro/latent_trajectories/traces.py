"""The noisy-teacher arithmetic language: questions, reasoning traces and their tokens.

Explained in chapters/latent-trajectories/02_experiments.md. A question is a chain of 4-7 digits to add modulo 10,
`Q 3 + 5 + 9 + 1 NL`. A trace writes one running sum per line, `3 + 5 = 8 NL`, `8 + 9 = 7 NL`, ..., and ends with
`ANS y NL EOS`. The teacher is noisy:

- with probability `p_wrong` a step's result is wrong (uniform over the nine wrong digits); after a wrong step it
  writes, with probability `p_check`, a detour `CHECK NL` and `REDO a + b = x NL`, whose result is right with
  probability `p_fix` (else wrong again); the chain goes on from the last value written;
- with probability `p_verify` a *right* step is followed by a harmless detour `CHECK NL`, `OK a + b = x NL` that
  writes the same right result, so that a long trace is not always a wrong one.

The "thinking" part of a trace is everything from the question's last NL up to the NL before `ANS` (the paper's
`<think> ... </think>`); its lines are the segments of the latent-trajectory signals.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..common import check_between, check_int

DIGITS = [str(d) for d in range(10)]
WORDS = DIGITS + ["+", "=", "NL", "Q", "CHECK", "REDO", "OK", "ANS", "EOS", "PAD"]
TOKEN = {w: i for i, w in enumerate(WORDS)}
VOCAB_SIZE = len(WORDS)
NL, PAD, EOS, ANS = TOKEN["NL"], TOKEN["PAD"], TOKEN["EOS"], TOKEN["ANS"]


@dataclass(frozen=True)
class Teacher:
    """The noisy teacher's rates (module docstring). Explained in chapters/latent-trajectories/02_experiments.md."""
    p_wrong: float = 0.15
    p_check: float = 0.7
    p_fix: float = 0.6
    p_verify: float = 0.2
    min_terms: int = 4
    max_terms: int = 7

    def __post_init__(self):
        for name in ("p_wrong", "p_check", "p_fix", "p_verify"):
            check_between(name, getattr(self, name), 0.0, 1.0, closed="both")
        check_int("min_terms", self.min_terms, low=2)
        check_int("max_terms", self.max_terms, low=self.min_terms)


def encode(words: list[str]) -> list[int]:
    """Token ids of a list of words of the language. Explained in chapters/latent-trajectories/02_experiments.md."""
    bad = [w for w in words if w not in TOKEN]
    if bad:
        raise ValueError(f"words must be in the vocabulary {WORDS}, got {bad[:3]}")
    return [TOKEN[w] for w in words]


def decode(tokens) -> str:
    """The words of a token sequence, lines broken at NL, padding dropped.

    Explained in chapters/latent-trajectories/02_experiments.md.
    """
    out = " ".join(WORDS[int(t)] for t in tokens if int(t) != PAD)
    return out.replace(" NL ", "\n").replace(" NL", "\n")


def question_words(terms) -> list[str]:
    """`Q t1 + t2 + ... NL`. Explained in chapters/latent-trajectories/02_experiments.md."""
    words = ["Q"]
    for i, t in enumerate(terms):
        words += (["+"] if i else []) + [str(int(t))]
    return words + ["NL"]


def _wrong(rng, right: int) -> int:
    return int((right + rng.integers(1, 10)) % 10)


def teacher_trace(terms, teacher: Teacher, rng: np.random.Generator) -> tuple[list[str], bool]:
    """The words of one noisy-teacher trace after the question, and whether its answer is right.

    Explained in chapters/latent-trajectories/02_experiments.md.
    """
    words, value = [], int(terms[0])
    for t in terms[1:]:
        t, right = int(t), (value + int(t)) % 10
        x = right if rng.random() >= teacher.p_wrong else _wrong(rng, right)
        words += [str(value), "+", str(t), "=", str(x), "NL"]
        if x != right and rng.random() < teacher.p_check:
            x = right if rng.random() < teacher.p_fix else _wrong(rng, right)
            words += ["CHECK", "NL", "REDO", str(value), "+", str(t), "=", str(x), "NL"]
        elif x == right and rng.random() < teacher.p_verify:
            words += ["CHECK", "NL", "OK", str(value), "+", str(t), "=", str(x), "NL"]
        value = x
    answer = int(np.sum(terms) % 10)
    return words + ["ANS", str(value), "NL", "EOS"], value == answer


def draw_questions(n: int, rng: np.random.Generator, min_terms: int = 4, max_terms: int = 7) -> list[np.ndarray]:
    """`n` questions: chains of `min_terms`..`max_terms` uniform digits.

    Explained in chapters/latent-trajectories/02_experiments.md.
    """
    check_int("n", n)
    check_int("max_terms", max_terms, low=check_int("min_terms", min_terms, low=2))
    lengths = rng.integers(min_terms, max_terms + 1, size=n)
    return [rng.integers(0, 10, size=k) for k in lengths]


def teacher_batch(n: int, teacher: Teacher, rng: np.random.Generator, max_len: int = 96):
    """`n` fresh teacher traces as a right-padded (n, max_len) int64 array, the loss mask (True on the trace, not on
    the question or the padding) and whether each trace's answer is right.

    Explained in chapters/latent-trajectories/02_experiments.md.
    """
    check_int("n", n)
    tokens = np.full((n, max_len), PAD, dtype=np.int64)
    mask = np.zeros((n, max_len), dtype=bool)
    right = np.zeros(n, dtype=bool)
    for i, terms in enumerate(draw_questions(n, rng, teacher.min_terms, teacher.max_terms)):
        q = encode(question_words(terms))
        words, right[i] = teacher_trace(terms, teacher, rng)
        seq = (q + encode(words))[:max_len]
        tokens[i, :len(seq)] = seq
        mask[i, len(q):len(seq)] = True
    return tokens, mask, right
