"""The training corpus and the evaluation sets, drawn from the six languages of `languages`.

Explained in chapters/moe-multilingual/01_theory.md ("The corpus"). A training row is `T` tokens, one of

- **monolingual text**: `<tag_l>` then sentences of language l until the row is full; l drawn by its share;
- **parallel pairs**: `<tag_a> s <sep> <tag_b> s'`, the same frame in English and one other trained language;
- **task rows**: `<tag_l>` then answered questions `sentence Qs A n .` / `sentence Qo A n .` (which noun is the
  subject, which the object); 90 % in English, the rest spread over the other trained languages by their shares;
  outside English only sentences whose verb is in a per-seed training half of the verbs appear, so the questions
  about the other verbs are, outside English, test questions.

Rows are right-padded with `<pad>`, which the loss ignores. Frames follow a tiny grammar: each verb allows six of
the twelve nouns as its object (a selectional restriction, the same in every language).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..common import check_between, check_int
from .languages import N_NOUNS, N_VERBS, Lexicon

__all__ = ["CorpusConfig", "Corpus", "make_corpus", "sample_frames", "pad_rows"]

PAD, BOS, SEP = 0, 1, 2


@dataclass(frozen=True)
class CorpusConfig:
    """Row length, the row-type mix, the task's English share and the test problems' share.

    Explained in chapters/moe-multilingual/01_theory.md.
    """
    seq_len: int = 32
    parallel_share: float = 0.05
    task_share: float = 0.30
    task_english: float = 0.90
    test_verbs: int = 4

    def __post_init__(self):
        check_int("seq_len", self.seq_len, 8)
        for name in ("parallel_share", "task_share", "task_english"):
            check_between(name, getattr(self, name), 0, 1, closed="both")
        if not 1 <= self.test_verbs < N_VERBS:
            raise ValueError(f"test_verbs must be between 1 and {N_VERBS - 1}, got {self.test_verbs}")
        if self.parallel_share + self.task_share > 1:
            raise ValueError("parallel_share + task_share must be at most 1")


def sample_frames(n: int, rng: np.random.Generator, p: int, verbs=None) -> np.ndarray:
    """`n` frames (subject, verb, count, object) as an (n, 4) int array, count in 0..p-1, the verb drawn from
    `verbs` (default: all); the object is one of the six nouns its verb allows and differs from the subject.
    Explained in chapters/moe-multilingual/01_theory.md."""
    check_int("n", n)
    check_int("p", p, 2)
    verbs = np.arange(N_VERBS) if verbs is None else np.asarray(verbs)
    verb = verbs[rng.integers(0, len(verbs), n)]
    obj = (3 * verb + rng.integers(0, 6, n)) % N_NOUNS
    subj = (obj + rng.integers(1, N_NOUNS, n)) % N_NOUNS          # never the object itself
    count = rng.integers(0, p, n)
    return np.stack([subj, verb, count, obj], 1)


def pad_rows(rows: list[list[int]], length: int) -> torch.Tensor:
    """Right-pad token lists with `<pad>` (truncating any longer row) into a (len(rows), length) int64 tensor.

    Explained in chapters/moe-multilingual/01_theory.md.
    """
    out = np.full((len(rows), length), PAD, dtype=np.int64)
    for i, r in enumerate(rows):
        r = r[:length]
        out[i, :len(r)] = r
    return torch.from_numpy(out)


@dataclass
class Corpus:
    """A lexicon, its corpus settings and the seed's split of the verbs into those whose questions non-English task
    rows may use and those held out for testing.

    Explained in chapters/moe-multilingual/01_theory.md.
    """
    lex: Lexicon
    cfg: CorpusConfig
    train_verbs: np.ndarray         # verbs whose questions non-English task rows may use
    test_verbs: np.ndarray          # verbs whose questions appear only in English (the test questions elsewhere)
    seed: int

    @property
    def trained(self) -> list[int]:
        """Languages with a positive share of text."""
        return [l for l, s in enumerate(self.lex.languages) if s.share > 0]

    def _frames(self, n, rng, verbs=None):
        return sample_frames(n, rng, self.lex.p, verbs)

    def _fill(self, first: list[int], make, rng) -> list[int]:
        row = list(first)
        while True:
            piece = make(rng)
            if len(row) + len(piece) > self.cfg.seq_len:
                return row
            row += piece

    def _task_language(self, rng) -> int:
        if rng.random() < self.cfg.task_english:
            return 0
        others = [l for l in self.trained if l != 0]
        w = np.array([self.lex.languages[l].share for l in others])
        return int(rng.choice(others, p=w / w.sum()))

    def row(self, rng: np.random.Generator) -> list[int]:
        """One training row (a token list of length at most seq_len)."""
        lex, u = self.lex, rng.random()
        if u < self.cfg.task_share:
            l = self._task_language(rng)
            verbs = None if l == 0 else self.train_verbs

            def make(r):
                return lex.render_question(l, self._frames(1, r, verbs)[0], int(r.integers(2)))
            return self._fill([lex.tag[l]], make, rng)
        if u < self.cfg.task_share + self.cfg.parallel_share:
            def make(r):
                other = int(r.choice([l for l in self.trained if l != 0]))
                a, b = (0, other) if r.random() < 0.5 else (other, 0)
                f = self._frames(1, r)[0]
                return [lex.tag[a], *lex.render_frame(a, f), SEP, lex.tag[b], *lex.render_frame(b, f), SEP]
            return self._fill([BOS], make, rng)
        w = np.array([s.share for s in lex.languages])
        l = int(rng.choice(lex.n_languages, p=w / w.sum()))
        return self._fill([lex.tag[l]], lambda r: lex.render_frame(l, self._frames(1, r)[0]), rng)

    def training_rows(self, n: int, seed: int) -> torch.Tensor:
        """`n` training rows as an (n, seq_len) int64 tensor, drawn with generator seed `seed`."""
        check_int("n", n)
        rng = np.random.default_rng(seed)
        return pad_rows([self.row(rng) for _ in range(n)], self.cfg.seq_len)

    # -- evaluation sets ---------------------------------------------------------------------------------------
    def parallel_sentences(self, n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
        """`n` frames rendered in every language: tokens (L, n, width) `<tag> sentence` and a content mask
        (L, n, width), True on the sentence's tokens (not the tag, not the padding); width is the longest row."""
        frames = self._frames(check_int("n", n), np.random.default_rng(seed))
        toks, masks = [], []
        per_language = [[[self.lex.tag[l], *self.lex.render_frame(l, f)] for f in frames]
                        for l in range(self.lex.n_languages)]
        width = max(len(r) for rows in per_language for r in rows)       # no columns of padding only
        for rows in per_language:
            t = pad_rows(rows, width)
            m = t != PAD
            m[:, 0] = False
            toks.append(t)
            masks.append(m)
        return torch.stack(toks), torch.stack(masks)

    def task_prompts(self, l: int, n: int, seed: int, which: str = "test"):
        """`n` questions `<tag_l> sentence Q A` in language l about frames whose verb is a test verb (`which` =
        "test") or a training verb ("train"); the same frames and questions in every language for one seed.
        Returns tokens (n, longest prompt), the index of each prompt's last token (n,) and the answer nouns (n,)."""
        if which not in ("test", "train"):
            raise ValueError(f"which must be 'test' or 'train', got {which!r}")
        rng = np.random.default_rng(seed)
        frames = self._frames(check_int("n", n), rng, self.test_verbs if which == "test" else self.train_verbs)
        asks = rng.integers(0, 2, n)
        rows = [[self.lex.tag[l], *self.lex.render_question(l, f, int(a), answer=False)] for f, a in zip(frames, asks)]
        answers = np.where(asks == 0, frames[:, 0], frames[:, 3])
        return pad_rows(rows, max(len(r) for r in rows)), np.array([len(r) - 1 for r in rows]), answers

    def task_text(self, l: int, n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
        """`n` rows of one answered question each in language l, as in training (tokens, content mask without the
        tag); the verbs are all verbs. Explained in chapters/moe-multilingual/02_experiments.md."""
        rng = np.random.default_rng(seed)
        frames = self._frames(check_int("n", n), rng)
        rows = [[self.lex.tag[l], *self.lex.render_question(l, f, int(a))] for f, a in zip(frames, rng.integers(0, 2, n))]
        t = pad_rows(rows, max(len(r) for r in rows))
        m = t != PAD
        m[:, 0] = False
        return t, m


def make_corpus(lex: Lexicon, cfg: CorpusConfig = CorpusConfig(), seed: int = 0) -> Corpus:
    """The corpus of `lex` with the seed's split of the verbs: `cfg.test_verbs` of them are held out of every
    non-English task row. Explained in chapters/moe-multilingual/01_theory.md."""
    if not isinstance(lex, Lexicon):
        raise ValueError(f"lex must be a Lexicon, got {type(lex).__name__}")
    if not isinstance(cfg, CorpusConfig):
        raise ValueError(f"cfg must be a CorpusConfig, got {type(cfg).__name__}")
    perm = np.random.default_rng(10_000 + seed).permutation(N_VERBS)
    return Corpus(lex, cfg, np.sort(perm[cfg.test_verbs:]), np.sort(perm[:cfg.test_verbs]), seed)
