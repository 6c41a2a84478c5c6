"""What the chapter measures on the codes of a paired SAE: neurons by modality, paired-code cosine, FVU, zero-shot
accuracy from codes and the multimodal monosemanticity score (MMS).

Explained in chapters/multimodal-sae/01_theory.md. Every function takes stacked codes (M, N, p) (or one model's
(N, p)) and returns one value per model.
"""
from __future__ import annotations

import numpy as np
import torch

from ..common import check_between

UNIMODAL_SHARE = 0.9


def _stack(z: torch.Tensor) -> torch.Tensor:
    if not isinstance(z, torch.Tensor) or z.ndim not in (2, 3):
        raise ValueError("codes must be a tensor of shape (N, p) or (M, N, p)")
    return z[None] if z.ndim == 2 else z


def neuron_counts(zx: torch.Tensor, zy: torch.Tensor, share: float = UNIMODAL_SHARE) -> dict:
    """Count latents as image-only, text-only, both or dead from their firings on matched evaluation pairs.

    A latent is dead if it never fires; image-only if at least `share` of its firings are on images; text-only
    likewise; otherwise both (multimodal). Returns {name: (M,) int array}. Explained in
    chapters/multimodal-sae/01_theory.md.
    """
    check_between("share", share, 0.5, 1, closed="right")
    zx, zy = _stack(zx), _stack(zy)
    if zx.shape != zy.shape:
        raise ValueError(f"zx and zy must have the same shape, got {tuple(zx.shape)} and {tuple(zy.shape)}")
    fx, fy = (zx > 0).sum(1).double(), (zy > 0).sum(1).double()
    tot = fx + fy
    dead = tot == 0
    frac = fx / tot.clamp_min(1)
    img = ~dead & (frac >= share)
    txt = ~dead & (frac <= 1 - share)
    both = ~dead & ~img & ~txt
    return {k: v.sum(-1).numpy() for k, v in (("image-only", img), ("text-only", txt), ("both", both),
                                                ("dead", dead))}


def paired_cosine(zx: torch.Tensor, zy: torch.Tensor) -> np.ndarray:
    """Mean cosine of the codes of matched pairs (0 where a code is all zero), per model.

    Explained in chapters/multimodal-sae/01_theory.md.
    """
    return paired_cosines(zx, zy).mean(-1)


def paired_cosines(zx: torch.Tensor, zy: torch.Tensor) -> np.ndarray:
    """Cosine of the codes of each matched pair (0 where a code is all zero), (M, N): the per-pair values behind
    `paired_cosine`, for a paired interval. Explained in chapters/multimodal-sae/02_experiments.md.
    """
    zx, zy = _stack(zx), _stack(zy)
    num = (zx * zy).sum(-1)
    den = zx.norm(dim=-1) * zy.norm(dim=-1)
    return (num / den.clamp_min(1e-12)).numpy()


def pair_fvu(x, y, x_hat, y_hat) -> np.ndarray:
    """Fraction of variance unexplained over both modalities, each centred on its own mean, per model.

    Explained in chapters/multimodal-sae/01_theory.md.
    """
    x_hat, y_hat = _stack(x_hat), _stack(y_hat)
    err = (x - x_hat).pow(2).sum((-1, -2)) + (y - y_hat).pow(2).sum((-1, -2))
    var = (x - x.mean(0)).pow(2).sum() + (y - y.mean(0)).pow(2).sum()
    return (err / var).numpy()


def code_zero_shot(z_img: torch.Tensor, z_prompts: torch.Tensor, labels) -> np.ndarray:
    """Zero-shot accuracy from codes, (M,): the share of `code_zero_shot_hits` over the N images.

    Explained in chapters/multimodal-sae/01_theory.md.
    """
    return code_zero_shot_hits(z_img, z_prompts, labels).mean(-1)


def code_zero_shot_hits(z_img: torch.Tensor, z_prompts: torch.Tensor, labels) -> np.ndarray:
    """Whether each image is classified right from codes, (M, N) booleans: each image code goes to the class whose
    mean prompt code is nearest in cosine.

    z_img (M, N, p); z_prompts (M, C*P, p) ordered class by class. Explained in chapters/multimodal-sae/01_theory.md;
    the hits give the paired interval of a difference of accuracies in chapters/multimodal-sae/02_experiments.md.
    """
    z_img, z_prompts = _stack(z_img), _stack(z_prompts)
    labels = np.asarray(labels)
    n_cls = int(labels.max()) + 1
    if z_prompts.shape[1] % n_cls:
        raise ValueError(f"z_prompts must hold the same number of prompts for each of {n_cls} classes")
    proto = torch.nn.functional.normalize(z_prompts.view(z_prompts.shape[0], n_cls, -1, z_prompts.shape[-1]).mean(2),
                                          dim=-1)
    sim = torch.bmm(torch.nn.functional.normalize(z_img, dim=-1), proto.transpose(1, 2))
    return sim.argmax(-1).numpy() == labels[None]


def mms(zx: torch.Tensor, zy: torch.Tensor, S: torch.Tensor) -> np.ndarray:
    """Multimodal monosemanticity of every latent, (M, p): MMS = Σ_ij Ã_ij S_ij with Ã_ij = a_i b_j / (Σa Σb).

    a (image i) and b (text j) are the latent's activations, S (N, N) the similarity of image i and text j under an
    independent description (here the ground-truth attributes). NaN where the latent is silent on a modality: MMS is
    a property of multimodal latents. Our reading of the brief's description; the paper's normalisation was not
    checked. Explained in chapters/multimodal-sae/01_theory.md.
    """
    zx, zy = _stack(zx), _stack(zy)
    if S.shape != (zx.shape[1], zy.shape[1]):
        raise ValueError(f"S must have shape ({zx.shape[1]}, {zy.shape[1]}), got {tuple(S.shape)}")
    num = torch.einsum("mip,ij,mjp->mp", zx.double(), S.double(), zy.double())
    den = zx.double().sum(1) * zy.double().sum(1)
    out = num / den
    out[den == 0] = float("nan")
    return out.numpy()
