"""Six synthetic languages that say the same things: one grammar of semantic frames, six surface forms.

Explained in chapters/moe-multilingual/01_theory.md ("Six languages from one grammar"). A *frame* is a meaning:
(subject noun, verb, count, object noun), e.g. (cat, sees, three, fish). A *question* asks for its subject or its object.
Each language renders frames and questions with

- its own block of token ids (the vocabularies of any two languages are disjoint: a different "script");
- a word order of subject (S), verb (V) and object phrase (O = count + object noun): SVO, SOV, VSO, OSV...;
- optionally case markers after the subject and the object phrase;
- optionally split nouns: a noun becomes two tokens, a stem and one of three shared suffixes (over-tokenization);
- a share of the language-model text (40/20/15/10/5/0 %); the last language is never seen in training.

The task is a reading question about a sentence: `sentence Qs A n .` asks for the subject noun, `sentence Qo A n .`
for the object noun, and the answer n is the noun's stem token. It has the same template in every language, in the
language's own tokens, so what the question asks is shared and only the surface (and the word order the reader
must undo) differs. Every rendering of a frame in every language is parallel by construction.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..common import check_int

__all__ = ["LanguageSpec", "DEFAULT_LANGUAGES", "Lexicon", "make_lexicon", "N_NOUNS", "N_VERBS", "SPECIAL", "ASKS"]

N_NOUNS = 12
N_VERBS = 8
N_SUFFIXES = 3
#: Shared special tokens; language tags follow them (one per language).
SPECIAL = ("<pad>", "<bos>", "<sep>")
ASKS = ("Qs", "Qo")   # ask for the subject, ask for the object


@dataclass(frozen=True)
class LanguageSpec:
    """One language: name, word order (a permutation of "SVO"), case markers, split nouns, LM-text share.

    Explained in chapters/moe-multilingual/01_theory.md.
    """
    name: str
    order: str
    case_markers: bool
    split_nouns: bool
    share: float

    def __post_init__(self):
        if sorted(self.order) != sorted("SVO"):
            raise ValueError(f"order must be a permutation of 'SVO', got {self.order!r}")
        if not 0 <= self.share <= 1:
            raise ValueError(f"share must be in [0, 1], got {self.share!r}")


#: The chapter's six languages. "en" plays English: most text and nearly all of the task.
DEFAULT_LANGUAGES = (
    LanguageSpec("en", "SVO", False, False, 0.40),
    LanguageSpec("l1", "SOV", True, False, 0.20),
    LanguageSpec("l2", "VSO", False, False, 0.15),
    LanguageSpec("l3", "SOV", True, True, 0.10),
    LanguageSpec("l4", "OSV", False, True, 0.05),
    LanguageSpec("l5", "VSO", True, True, 0.00),
)


@dataclass
class Lexicon:
    """The token ids of every language (built by `make_lexicon`). Explained in chapters/moe-multilingual/01_theory.md.

    For language index `l`: `noun[l]` (N_NOUNS, 2) stem and suffix ids (suffix -1 when the noun is one token),
    `verb[l]` (N_VERBS,), `num[l]` (p,), and `word[l]` a dict of the function words Qs, Qo, A, '.', NOM, ACC.
    """
    languages: tuple[LanguageSpec, ...]
    p: int
    noun: list[np.ndarray]
    verb: list[np.ndarray]
    num: list[np.ndarray]
    word: list[dict]
    blocks: list[tuple[int, int]]
    vocab_size: int
    tag: list[int] = field(default_factory=list)

    @property
    def n_languages(self) -> int:
        return len(self.languages)

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.languages]

    def index(self, name: str) -> int:
        """The index of the language called `name`."""
        if name not in self.names:
            raise ValueError(f"language must be one of {self.names}, got {name!r}")
        return self.names.index(name)

    def language_of(self, token: int) -> int:
        """Which language's block `token` belongs to (-1 for a shared special token or a tag)."""
        for l, (lo, hi) in enumerate(self.blocks):
            if lo <= token < hi:
                return l
        return -1

    def token_name(self, token: int) -> str:
        """A readable name: `<bos>`, `<l3>` (a tag), `l3:noun7`, `l3:-s1` (a suffix), `l3:num4`, `l3:Q`..."""
        token = int(token)
        if token < len(SPECIAL):
            return SPECIAL[token]
        if token in self.tag:
            return f"<{self.names[self.tag.index(token)]}>"
        l = self.language_of(token)
        if l < 0:
            raise ValueError(f"token must be below vocab_size={self.vocab_size}, got {token}")
        name = self.names[l]
        for k, (stem, suffix) in enumerate(self.noun[l]):
            if token == stem:
                return f"{name}:noun{k}"
        sfx = sorted({int(s) for s in self.noun[l][:, 1] if s >= 0})
        if token in sfx:
            return f"{name}:-s{sfx.index(token)}"
        for kind, ids in (("verb", self.verb[l]), ("num", self.num[l])):
            if token in ids:
                return f"{name}:{kind}{list(ids).index(token)}"
        return f"{name}:" + next(w for w, t in self.word[l].items() if t == token)

    def decode(self, tokens) -> str:
        """Tokens as readable names joined by spaces, padding dropped (chapters/moe-multilingual/01_theory.md)."""
        return " ".join(self.token_name(t) for t in tokens if int(t) != 0)

    # -- rendering ---------------------------------------------------------------------------------------------
    def _noun(self, l: int, k: int) -> list[int]:
        stem, suffix = self.noun[l][k]
        return [int(stem)] if suffix < 0 else [int(stem), int(suffix)]

    def render_frame(self, l: int, frame) -> list[int]:
        """The tokens of one sentence that says `frame` = (subject, verb, count, object) in language `l`."""
        subj, verb, count, obj = (int(v) for v in frame)
        spec, w = self.languages[l], self.word[l]
        parts = {"S": self._noun(l, subj) + ([w["NOM"]] if spec.case_markers else []),
                 "V": [int(self.verb[l][verb])],
                 "O": [int(self.num[l][count])] + self._noun(l, obj) + ([w["ACC"]] if spec.case_markers else [])}
        return [t for role in spec.order for t in parts[role]] + [w["."]]

    def render_question(self, l: int, frame, ask: int, answer: bool = True) -> list[int]:
        """`sentence Q A n .` in language l: ask=0 asks for the subject, 1 for the object; n is that noun's stem
        (without `n .` when `answer=False`: the prompt)."""
        if ask not in (0, 1):
            raise ValueError(f"ask must be 0 (subject) or 1 (object), got {ask!r}")
        w = self.word[l]
        tokens = self.render_frame(l, frame)[:-1] + [w[ASKS[ask]], w["A"]]
        noun = int(frame[0] if ask == 0 else frame[3])
        return tokens + ([int(self.noun[l][noun, 0]), w["."]] if answer else [])


def make_lexicon(languages=DEFAULT_LANGUAGES, p: int = 7) -> Lexicon:
    """Give every language its own block of token ids, after the shared special tokens and one tag per language.

    Within a block: nouns (stems), suffixes (only when the language splits nouns), verbs, numbers 0..p-1 (the
    counts), then the function words. The layout is fixed (no randomness): the model cannot tell it from a shuffled one, since token
    ids are just rows of the embedding. Explained in chapters/moe-multilingual/01_theory.md.
    """
    languages = tuple(languages)
    if not languages or not all(isinstance(s, LanguageSpec) for s in languages):
        raise ValueError("languages must be a non-empty sequence of LanguageSpec")
    if len({s.name for s in languages}) != len(languages):
        raise ValueError("languages must have distinct names")
    check_int("p", p, 2)
    tags = list(range(len(SPECIAL), len(SPECIAL) + len(languages)))
    nxt = len(SPECIAL) + len(languages)
    noun, verb, num, word, blocks = [], [], [], [], []
    for spec in languages:
        start = nxt
        stems = np.arange(nxt, nxt + N_NOUNS); nxt += N_NOUNS
        suffix = np.full(N_NOUNS, -1)
        if spec.split_nouns:
            sfx = np.arange(nxt, nxt + N_SUFFIXES); nxt += N_SUFFIXES
            suffix = np.where(np.arange(N_NOUNS) % 2 == 1, sfx[np.arange(N_NOUNS) % N_SUFFIXES], -1)
        noun.append(np.stack([stems, suffix], 1))
        verb.append(np.arange(nxt, nxt + N_VERBS)); nxt += N_VERBS
        num.append(np.arange(nxt, nxt + p)); nxt += p
        names = [*ASKS, "A", "."] + (["NOM", "ACC"] if spec.case_markers else [])
        word.append({n: nxt + i for i, n in enumerate(names)}); nxt += len(names)
        blocks.append((start, nxt))
    return Lexicon(languages, p, noun, verb, num, word, blocks, nxt, tags)
