"""scikit-learn's digits with synthetic captions: the paired image-text data of the tiny CLIP.

Explained in chapters/multimodal-sae/02_experiments.md. Each 8x8 digit gets three attributes computed from its
pixels, each split at the median (or tertiles) of its class so that every value is common: ink (thick / thin),
slant (left / upright / right, from the intensity-weighted covariance of the pixel coordinates) and size (big /
small, the number of inked pixels). A caption is a template filled with the class word ("seven" or "7") and some
attributes: "a thick seven leaning left". The attribute vector (class one-hot, then the three attributes one-hot)
is the ground truth that the chapter's MMS score uses as its independent similarity.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.datasets import load_digits

from ..common import check_int

WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
INK = ("thin", "thick")
SLANT = ("left", "upright", "right")
SIZE = ("small", "big")
TEMPLATES = ("a handwritten {c}", "the numeral {c}", "a {ink} {c}", "a {size} {c}", "a {c} leaning {slant}",
             "a {ink} {c} leaning {slant}", "a {size} {ink} handwritten {c}", "the digit {c} written {slant}")
PROMPTS = ("a handwritten {c}", "the numeral {c}", "the digit {c}")


@dataclass
class CaptionedDigits:
    """Images (N, 64) in [0, 1], labels (N,), attribute indices (N, 3): ink, slant, size; captions (N, n_captions)
    as token-index lists; the vocabulary; the attribute vectors (N, 17). Explained in
    chapters/multimodal-sae/02_experiments.md."""

    images: np.ndarray
    labels: np.ndarray
    attributes: np.ndarray
    captions: list
    vocab: dict
    attribute_vectors: np.ndarray

    def caption_text(self, i: int, j: int = 0) -> str:
        """Caption j of image i, as words."""
        inv = {v: k for k, v in self.vocab.items()}
        return " ".join(inv[t] for t in self.captions[i][j])


def digit_attributes(images: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(N, 3) attribute indices ink, slant, size of 8x8 digits, split within each class.

    Explained in chapters/multimodal-sae/02_experiments.md.
    """
    images = np.asarray(images, dtype=float)
    if images.ndim != 2 or images.shape[1] != 64:
        raise ValueError(f"images must have shape (N, 64), got {images.shape}")
    labels = np.asarray(labels)
    if labels.shape != (images.shape[0],):
        raise ValueError(f"labels must have shape ({images.shape[0]},), got {labels.shape}")
    rr, cc = np.meshgrid(np.arange(8.0), np.arange(8.0), indexing="ij")
    w = images / images.sum(1, keepdims=True).clip(1e-9)
    mr, mc = w @ rr.ravel(), w @ cc.ravel()
    cov = w @ (rr.ravel() * cc.ravel()) - mr * mc
    var_r = w @ (rr.ravel() ** 2) - mr ** 2
    slope = -cov / var_r.clip(1e-9)        # > 0: the top leans right
    ink = images.sum(1)
    size = (images > 0.25).sum(1)
    out = np.zeros((images.shape[0], 3), dtype=int)
    for c in np.unique(labels):
        sel = labels == c
        out[sel, 0] = ink[sel] > np.median(ink[sel])
        lo, hi = np.quantile(slope[sel], [1 / 3, 2 / 3])
        out[sel, 1] = np.where(slope[sel] < lo, 0, np.where(slope[sel] > hi, 2, 1))
        out[sel, 2] = size[sel] > np.median(size[sel])
    return out


def build_vocab() -> dict:
    """Word -> index over every template, class word and attribute. Explained in chapters/multimodal-sae/02_experiments.md."""
    words = set(WORDS) | {str(i) for i in range(10)} | set(INK) | set(SLANT) | set(SIZE)
    for t in TEMPLATES + PROMPTS:
        words |= {w for w in t.split() if not w.startswith("{")}
    return {w: i for i, w in enumerate(sorted(words))}


def caption_tokens(template: str, vocab: dict, c: int, ink: int, slant: int, size: int, numeral: bool) -> list:
    """Token indices of one filled template. Explained in chapters/multimodal-sae/02_experiments.md."""
    text = template.format(c=str(c) if numeral else WORDS[c], ink=INK[ink], slant=SLANT[slant], size=SIZE[size])
    return [vocab[w] for w in text.split()]


def load_captioned_digits(n_captions: int = 5, seed: int = 0) -> CaptionedDigits:
    """All 1797 digits, each with `n_captions` random captions (template and class word drawn at random).

    Explained in chapters/multimodal-sae/02_experiments.md.
    """
    check_int("n_captions", n_captions)
    d = load_digits()
    images = d.data / 16.0
    labels = d.target.astype(int)
    attrs = digit_attributes(images, labels)
    vocab = build_vocab()
    rng = np.random.default_rng(seed)
    caps = []
    for i in range(len(labels)):
        t_idx = rng.integers(len(TEMPLATES), size=n_captions)
        numeral = rng.random(n_captions) < 0.3
        caps.append([caption_tokens(TEMPLATES[t], vocab, labels[i], *attrs[i], numeral=bool(n))
                     for t, n in zip(t_idx, numeral)])
    vec = np.concatenate([np.eye(10)[labels], np.eye(2)[attrs[:, 0]], np.eye(3)[attrs[:, 1]], np.eye(2)[attrs[:, 2]]], 1)
    return CaptionedDigits(images=images.astype(np.float32), labels=labels, attributes=attrs, captions=caps,
                           vocab=vocab, attribute_vectors=vec.astype(np.float32))


def prompt_tokens(vocab: dict) -> list:
    """Zero-shot prompts: for each class, a list of token lists (one per prompt template).

    Explained in chapters/multimodal-sae/02_experiments.md.
    """
    return [[[vocab[w] for w in p.format(c=WORDS[c]).split()] for p in PROMPTS] for c in range(10)]
