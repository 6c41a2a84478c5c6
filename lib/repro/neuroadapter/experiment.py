"""The chapter's experiment in a few calls: the models and data of a seed, reconstructions under masks and
controls, their scores, and the IBBI summaries the claims read.

Explained in chapters/neuroadapter/02_experiments.md.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..common.checks import check_choice, check_int, check_non_negative
from .baselines import rank_by_encoder, ridge_fit
from .cortex import ROIS
from .diffusion import Schedule, sample
from .ibbi import brain_view, image_view, peak_distance, spatial_entropy
from .metrics import HeldOutClassifier, pixcorr, ssim, two_way_identification
from .shipped import FEATURES, _feature_net, load_adapters, load_unet, make_adapters, seed_data

__all__ = ["GUIDANCE", "STEPS", "PILOT_GUIDANCE", "PILOT_SEED", "guidance_pilot", "pooled_over_seeds", "Context", "load_context", "reconstruct", "reconstruct_two_stage", "scores",
           "keep_without", "retinotopy", "entropy_by_step", "ranked"]

#: Classifier-free guidance scale: the best class accuracy of ``guidance_pilot`` on development seed 100.
GUIDANCE = 2.0
#: The guidance scales the pilot compares, and its development seed.
PILOT_GUIDANCE, PILOT_SEED = (1.0, 2.0, 3.0, 5.0), 100
#: DDIM steps.
STEPS = 25


@dataclass
class Context:
    """Everything one seed's experiment reads: the frozen U-Net, the adapters, the data and the held-out
    classifier. Explained in chapters/neuroadapter/02_experiments.md.
    """

    unet: object
    models: dict
    data: dict
    classifier: HeldOutClassifier
    schedule: Schedule
    unet_info: dict


def load_context(scale: str, seed: int, n_test: int, progress=None) -> Context:
    """The shipped U-Net; the seed's shipped adapters at ``"ci"``, retrained by ``make_adapters`` at ``"full"``;
    ``n_test`` test trials. Explained in chapters/neuroadapter/02_experiments.md.
    """
    check_choice("scale", scale, ("ci", "full"))
    seed, n_test = check_int("seed", seed, low=0), check_int("n_test", n_test, low=2)
    unet, info = load_unet()
    models = make_adapters(seed, unet, progress) if scale == "full" else load_adapters(seed, unet)
    data = seed_data(seed, n_test)
    clf = HeldOutClassifier(data["train"].x, data["train"].y)
    return Context(unet, models, data, clf, Schedule(), info)


def reconstruct(ctx: Context, voxels, keep=None, guidance: float = GUIDANCE, seed: int = 0, record: bool = False):
    """Images (n, 16, 16) decoded from ``voxels`` (tokens zeroed where ``keep`` is False) by guided DDIM, and the
    attention trace when ``record``. Explained in chapters/neuroadapter/02_experiments.md.
    """
    guidance = check_non_negative("guidance", guidance)
    adapter = ctx.models["adapter"]
    adapter.attach(ctx.unet)
    with torch.no_grad():
        tokens = adapter.tokens(torch.as_tensor(np.asarray(voxels, dtype=np.float32)), keep)
    x, trace = sample(ctx.unet, ctx.schedule, tokens, guidance, STEPS, seed, record)
    return x[:, 0].numpy(), trace


def reconstruct_two_stage(ctx: Context, guidance: float = GUIDANCE, seed: int = 0) -> np.ndarray:
    """The two-stage baseline: ridge from training voxels to the feature network's features, then the frozen
    U-Net through the feature adapter. Explained in chapters/neuroadapter/02_experiments.md.
    """
    d = ctx.data
    fnet = _feature_net(d)
    ridge = ridge_fit(d["vox_train"], fnet.features(d["train"].x))
    f = ridge.predict(d["vox_test"].reshape(len(d["vox_test"]), -1))
    sc = ctx.models["feature_scale"].numpy()
    fz = ((f - sc[0]) / sc[1]).reshape(len(f), 4, FEATURES // 4).astype(np.float32)
    feat = ctx.models["feature_adapter"]
    feat.attach(ctx.unet)
    with torch.no_grad():
        tokens = feat.tokens(torch.as_tensor(fz))
    x, _ = sample(ctx.unet, ctx.schedule, tokens, guidance, STEPS, seed)
    ctx.models["adapter"].attach(ctx.unet)
    return x[:, 0].numpy()


def scores(ctx: Context, recon) -> dict:
    """Mean PixCorr and SSIM, two-way identification (held-out classifier's features) and class accuracy of
    ``recon`` against the test images. Explained in chapters/neuroadapter/02_experiments.md.
    """
    te = ctx.data["test"]
    r = np.asarray(recon)
    if r.shape != te.x.shape:
        raise ValueError(f"recon must have the test images' shape {te.x.shape}; got {r.shape}")
    clf = ctx.classifier
    return {"PixCorr": float(pixcorr(r, te.x).mean()), "SSIM": float(ssim(r, te.x).mean()),
            "2-way": two_way_identification(clf.features(r), clf.features(te.x)),
            "class": clf.accuracy(r, te.y)}


def keep_without(ctx: Context, roi: str | None) -> np.ndarray:
    """The keep mask (parcels,) that zeroes ``roi``'s tokens (None keeps all). Explained in
    chapters/neuroadapter/02_experiments.md.
    """
    cx = ctx.data["cortex"]
    keep = np.ones(cx.n_parcels, bool)
    if roi is not None:
        keep[cx.parcels(check_choice("roi", roi, ROIS))] = False
    return keep


def retinotopy(ctx: Context, trace, radius: float = 3.0) -> dict:
    """Per V1 parcel, the peak of its final-step map ``m_{p}`` (averaged over test images) against its RF centre:
    ``{"distance" (16,), "within" fraction, "chance", "maps" (16, 16, 16)}``. Explained in
    chapters/neuroadapter/02_experiments.md.
    """
    radius = check_non_negative("radius", radius)
    cx = ctx.data["cortex"]
    maps = torch.stack([image_view(trace[-1], [p]).mean(0) for p in cx.parcels("V1")])
    centres = cx.rf_centres["V1"]
    dist = peak_distance(maps, centres)
    yy, xx = np.mgrid[0:16, 0:16]
    chance = float(np.mean([(np.hypot(yy - c[0], xx - c[1]) <= radius).mean() for c in centres]))
    return {"distance": dist, "within": float((dist <= radius).mean()), "chance": chance, "maps": maps.numpy()}


def entropy_by_step(ctx: Context, trace, rois=("V1", "V4", "category", "global"), per_image: bool = False) -> np.ndarray:
    """Spatial entropy (normalised) of each ROI's map ``m_R`` at each step, averaged over test images:
    (steps, len(rois)); with ``per_image`` the images are kept, (steps, len(rois), n), for an interval over them.
    Explained in chapters/neuroadapter/02_experiments.md.
    """
    cx = ctx.data["cortex"]
    h = np.array([[spatial_entropy(image_view(step, cx.parcels(r))).numpy() for r in rois] for step in trace],
                 dtype=np.float64)
    return h if per_image else h.mean(-1)


def ranked(ctx: Context, candidates) -> tuple[np.ndarray, np.ndarray]:
    """Pick among ``candidates`` (K, n, 16, 16) by the ridge encoder image → voxels fitted on training trials.

    Explained in chapters/neuroadapter/02_experiments.md.
    """
    d = ctx.data
    enc = ridge_fit(d["train"].x, d["vox_train"])
    return rank_by_encoder(enc, candidates, d["vox_test"])


def brain_shares(trace) -> torch.Tensor:
    """``B^(t)`` for every step: (steps, n, p). Explained in chapters/neuroadapter/02_experiments.md."""
    return torch.stack([brain_view(step) for step in trace])


__all__.append("brain_shares")


def guidance_pilot(n_test: int = 100, scales=PILOT_GUIDANCE, seed: int = PILOT_SEED) -> dict:
    """The pilot that chose ``GUIDANCE``: the shipped models of development seed ``seed`` decode ``n_test`` test
    trials at each guidance scale; returns ``{scale: scores(...)}``. The rule, fixed before the pilot: the scale with
    the best class accuracy. Explained in chapters/neuroadapter/02_experiments.md.
    """
    ctx = load_context("ci", seed, n_test)
    return {float(g): scores(ctx, reconstruct(ctx, ctx.data["vox_test"], guidance=g, seed=seed)[0]) for g in scales}


def pooled_over_seeds(n_test: int, seeds=(0, 1, 2)) -> dict:
    """The two claims whose verdict changed with the seed at ci, measured on the shipped models of ``seeds`` at once:
    per test trial of each seed, whether the held-out classifier reads NeuroAdapter's reconstruction as the right
    digit (``"correct"``), and how much more PixCorr masking V1 costs than masking the category ROI
    (``"v1_minus_category"``). Explained in chapters/neuroadapter/02_experiments.md.
    """
    n_test = check_int("n_test", n_test, low=2)
    correct, extra = [], []
    for s in seeds:
        ctx = load_context("ci", s, n_test)
        vox, x = ctx.data["vox_test"], ctx.data["test"].x
        recon = {roi: reconstruct(ctx, vox, keep=keep_without(ctx, roi), seed=s)[0] for roi in (None, "V1", "category")}
        pix = {roi: pixcorr(r, x) for roi, r in recon.items()}
        correct.append(ctx.classifier.predict(recon[None]) == ctx.data["test"].y)
        extra.append((pix[None] - pix["V1"]) - (pix[None] - pix["category"]))
    return {"correct": np.concatenate(correct), "v1_minus_category": np.concatenate(extra)}
