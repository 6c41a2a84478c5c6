"""A tiny CLIP: an image MLP and a bag-of-words text encoder trained with InfoNCE and a learned temperature.

Explained in chapters/multimodal-sae/02_experiments.md. Both encoders end in a unit-norm embedding of width `dim`;
the loss is the symmetric cross-entropy of the (B, B) similarity matrix scaled by exp(t), t learned (Radford et
al. 2021). `modality_gap` reports the two numbers the chapter uses for the gap: the distance between the modality
means of the unit embeddings, and the mean cosine of matched pairs.
"""
from __future__ import annotations


import numpy as np
import torch
from torch import nn

from ..common import check_int, check_non_negative, check_positive, stopwatch
from ..nn.contrastive import symmetric_info_nce


class TinyCLIP(nn.Module):
    """Image MLP 64 -> hidden -> dim and text EmbeddingBag(mean) -> hidden -> dim, with a learned log-temperature.

    Explained in chapters/multimodal-sae/02_experiments.md.
    """

    def __init__(self, vocab_size: int, dim: int = 32, hidden: int = 128, cone: float = 0.0, seed: int = 0):
        super().__init__()
        check_non_negative("cone", cone)
        check_int("vocab_size", vocab_size)
        check_int("dim", dim)
        check_int("hidden", hidden)
        torch.manual_seed(int(seed))
        self.image = nn.Sequential(nn.Linear(64, hidden), nn.GELU(), nn.Linear(hidden, dim))
        self.embed = nn.EmbeddingBag(vocab_size, hidden, mode="mean")
        self.text = nn.Sequential(nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, dim))
        self.log_scale = nn.Parameter(torch.tensor(float(np.log(1 / 0.07))))
        with torch.no_grad():                  # the cone effect: each tower starts in its own narrow cone
            for head in (self.image[-1], self.text[-1]):
                u = torch.randn(dim)
                head.bias.copy_(cone * u / u.norm())

    def encode_image(self, images: torch.Tensor) -> torch.Tensor:
        """Unit-norm image embeddings (B, dim)."""
        return nn.functional.normalize(self.image(images), dim=-1)

    def encode_text(self, tokens: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        """Unit-norm text embeddings of a flat token tensor with EmbeddingBag offsets."""
        return nn.functional.normalize(self.text(self.embed(tokens, offsets)), dim=-1)


def pack(token_lists) -> tuple[torch.Tensor, torch.Tensor]:
    """Flat tokens and offsets for EmbeddingBag. Explained in chapters/multimodal-sae/02_experiments.md."""
    if len(token_lists) == 0:
        raise ValueError("token_lists must not be empty")
    lens = [len(t) for t in token_lists]
    flat = torch.tensor([w for t in token_lists for w in t], dtype=torch.long)
    offsets = torch.tensor(np.concatenate([[0], np.cumsum(lens)[:-1]]), dtype=torch.long)
    return flat, offsets


def info_nce(img: torch.Tensor, txt: torch.Tensor, log_scale: torch.Tensor) -> torch.Tensor:
    """Symmetric InfoNCE of matched rows. Explained in chapters/multimodal-sae/02_experiments.md."""
    return symmetric_info_nce(log_scale.clamp(max=np.log(100.0)).exp() * img @ txt.t())


def train_clip(data, train_idx, steps: int = 400, batch_size: int = 256, lr: float = 3e-3, dim: int = 32,
               cone: float = 0.0, seed: int = 0) -> tuple[TinyCLIP, dict]:
    """Train a TinyCLIP on images `train_idx` of `data` (a CaptionedDigits), one random caption per image per step.

    Returns (model, history with loss, temperature and seconds). Explained in chapters/multimodal-sae/02_experiments.md.
    """
    check_int("steps", steps)
    check_int("batch_size", batch_size)
    check_positive("lr", lr)
    train_idx = np.asarray(train_idx)
    if train_idx.ndim != 1 or len(train_idx) < 2:
        raise ValueError("train_idx must be a 1-d array of at least 2 image indices")
    model = TinyCLIP(len(data.vocab), dim=dim, cone=cone, seed=seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    images = torch.from_numpy(data.images)
    n_cap = len(data.captions[0])
    hist = {"loss": [], "temperature": []}
    with stopwatch() as watch:
        for _ in range(steps):
            idx = rng.choice(train_idx, size=min(batch_size, len(train_idx)), replace=False)
            caps = [data.captions[i][j] for i, j in zip(idx, rng.integers(n_cap, size=len(idx)))]
            loss = info_nce(model.encode_image(images[idx]), model.encode_text(*pack(caps)), model.log_scale)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            hist["loss"].append(float(loss.detach()))
            hist["temperature"].append(float(1 / model.log_scale.detach().clamp(max=np.log(100.0)).exp()))
    hist["seconds"] = watch.seconds
    model.eval()
    return model, hist


@torch.no_grad()
def embed_pairs(model: TinyCLIP, data, idx, caption: int | None = None, seed: int = 0):
    """Image and text embeddings (N, dim) of images `idx`: every caption of each (caption=None, N = len(idx) *
    n_captions) or caption number `caption`. Also returns the image index of each row.

    Explained in chapters/multimodal-sae/02_experiments.md.
    """
    idx = np.asarray(idx)
    n_cap = len(data.captions[0])
    if caption is None:
        rows = np.repeat(idx, n_cap)
        caps = [data.captions[i][j] for i in idx for j in range(n_cap)]
    else:
        if not 0 <= caption < n_cap:
            raise ValueError(f"caption must be in [0, {n_cap}), got {caption}")
        rows = idx
        caps = [data.captions[i][caption] for i in idx]
    x = model.encode_image(torch.from_numpy(data.images[rows]))
    y = model.encode_text(*pack(caps))
    return x, y, rows


@torch.no_grad()
def embed_prompts(model: TinyCLIP, prompts) -> torch.Tensor:
    """(C, P, dim) embeddings of the zero-shot prompts (C classes, P templates each).

    Explained in chapters/multimodal-sae/02_experiments.md.
    """
    flat = [p for cls in prompts for p in cls]
    e = model.encode_text(*pack(flat))
    return e.view(len(prompts), -1, e.shape[-1])


def modality_gap(x: torch.Tensor, y: torch.Tensor) -> dict:
    """`gap`: |mean(x) - mean(y)| of unit embeddings; `paired_cosine`: mean cos(x_i, y_i); `mean_cosine`: mean
    cos(x_i, y_j) over all pairs. Explained in chapters/multimodal-sae/02_experiments.md."""
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same shape, got {tuple(x.shape)} and {tuple(y.shape)}")
    xn, yn = nn.functional.normalize(x, dim=-1), nn.functional.normalize(y, dim=-1)
    return {"gap": float((xn.mean(0) - yn.mean(0)).norm()), "paired_cosine": float((xn * yn).sum(-1).mean()),
            "mean_cosine": float(xn.mean(0) @ yn.mean(0))}


@torch.no_grad()
def dense_zero_shot(x: torch.Tensor, prompt_emb: torch.Tensor, labels) -> float:
    """Accuracy of classifying rows of x by the nearest class-mean prompt embedding (cosine).

    Explained in chapters/multimodal-sae/02_experiments.md.
    """
    return float(dense_zero_shot_hits(x, prompt_emb, labels).mean())


def dense_zero_shot_hits(x: torch.Tensor, prompt_emb: torch.Tensor, labels) -> np.ndarray:
    """Whether each row of x is classified right by the nearest class-mean prompt embedding (cosine), (N,) booleans:
    the per-image hits behind `dense_zero_shot`, for a paired interval. Explained in
    chapters/multimodal-sae/02_experiments.md.
    """
    proto = nn.functional.normalize(nn.functional.normalize(prompt_emb, dim=-1).mean(1), dim=-1)
    pred = (nn.functional.normalize(x, dim=-1) @ proto.t()).argmax(1).numpy()
    return pred == np.asarray(labels)
