"""One seed of the chapter's experiment: captioned digits -> tiny CLIP -> a stacked sweep of paired SAEs -> metrics.

Explained in chapters/multimodal-sae/02_experiments.md. The sweep trains, in one batched loop and on the same
batches, every (λ, p_mask) of `LAMBDAS` × `P_MASKS` plus a second copy of the plain SAE (λ = 0, p_mask = 0) made
with `PairedSAE`'s group and mask code switched on (the null control). SAE, GSAE and MGSAE are three cells of that
grid, named in `VARIANTS`. All settings were fixed on development seed 100.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from ..common import check_choice, check_int, cluster_bootstrap_ci, stopwatch, thread_limit
from .captions import load_captioned_digits, prompt_tokens
from .clip import dense_zero_shot_hits, embed_pairs, embed_prompts, modality_gap, train_clip
from .gsae import PairedSAE, encode_pairs, train_paired
from .metrics import code_zero_shot_hits, mms, neuron_counts, pair_fvu, paired_cosines

LAMBDAS = (0.0, 0.1, 0.2)
P_MASKS = (0.0, 0.1, 0.3)
VARIANTS = {"SAE": (0.0, 0.0), "GSAE": (0.1, 0.0), "MGSAE": (0.1, 0.3)}
SIZES = {"ci": dict(clip_steps=400, sae_steps=1000, p=128, k=4, batch=128, n_train=1400),
         "full": dict(clip_steps=800, sae_steps=3000, p=128, k=4, batch=128, n_train=1400)}


@dataclass
class Study:
    """Everything one seed produced; `table` holds one row of metrics per (λ, p_mask) model.

    Explained in chapters/multimodal-sae/02_experiments.md.
    """

    seed: int
    grid: list
    table: dict
    clip_history: dict
    gap: dict
    dense_zero_shot: float
    null_max_diff: float
    sae_seconds: float
    sae_steps: int
    mms: dict = field(default_factory=dict)
    zero_shot_hits: np.ndarray | None = None
    dense_hits: np.ndarray | None = None
    pair_cosines: np.ndarray | None = None
    data: object = None
    embeddings: dict = field(default_factory=dict)

    def row(self, variant: str) -> dict:
        """The metrics of SAE, GSAE or MGSAE."""
        check_choice("variant", variant, tuple(VARIANTS))
        m = self.grid.index(VARIANTS[variant])
        return {k: v[m] for k, v in self.table.items()}


def run_study(seed: int, scale: str = "ci") -> Study:
    """Train the tiny CLIP and the SAE sweep for one seed and measure everything, on one thread (the matrices are
    tiny; more threads only synchronise). Explained in chapters/multimodal-sae/02_experiments.md."""
    check_int("seed", seed, 0)
    check_choice("scale", scale, tuple(SIZES))
    with thread_limit(1):
        return _run_study(seed, scale)


def _run_study(seed: int, scale: str) -> Study:
    z = SIZES[scale]
    data = load_captioned_digits(5, seed)
    perm = np.random.default_rng(seed).permutation(len(data.labels))
    tr, va = perm[:z["n_train"]], perm[z["n_train"]:]
    clip, hist = train_clip(data, tr, steps=z["clip_steps"], seed=seed)
    x, y, _ = embed_pairs(clip, data, tr)
    xv, yv, _ = embed_pairs(clip, data, va, caption=0)
    pe = embed_prompts(clip, prompt_tokens(data.vocab))
    grid = [(lam, pm) for lam in LAMBDAS for pm in P_MASKS] + [(0.0, 0.0)]
    sae = PairedSAE(x.shape[1], z["p"], z["k"], [g[0] for g in grid], [g[1] for g in grid], seed=seed)
    h = train_paired(sae, x, y, z["sae_steps"], batch_size=z["batch"], seed=seed)
    zx, zy, xh, yh = encode_pairs(sae, xv, yv)
    counts = neuron_counts(zx, zy)
    zp = sae.encode(pe.reshape(-1, pe.shape[-1]), 1)
    hits = code_zero_shot_hits(zx, zp, data.labels[va])
    dense_hits = dense_zero_shot_hits(xv, pe, data.labels[va])
    cosines = paired_cosines(zx, zy)
    table = {"lambda": np.array([g[0] for g in grid]), "p_mask": np.array([g[1] for g in grid]), **counts,
             "paired_cosine": cosines.mean(-1), "fvu": pair_fvu(xv, yv, xh, yh), "zero_shot": hits.mean(-1)}
    live = sum(counts[k] for k in ("image-only", "text-only", "both"))
    table["unimodal_share"] = (counts["image-only"] + counts["text-only"]) / np.maximum(live, 1)
    null = float((zx[0] - zx[-1]).abs().max().max(((zy[0] - zy[-1]).abs().max())))
    A = torch.from_numpy(data.attribute_vectors[va])
    A = torch.nn.functional.normalize(A, dim=-1)
    scores = mms(zx, zy, A @ A.t())
    mms_by = {v: scores[grid.index(g)] for v, g in VARIANTS.items()}
    return Study(seed=seed, grid=grid, table=table, clip_history=hist, gap=modality_gap(xv, yv),
                 dense_zero_shot=float(dense_hits.mean()), null_max_diff=null,
                 sae_seconds=h["seconds"], sae_steps=z["sae_steps"], mms=mms_by, zero_shot_hits=hits,
                 dense_hits=dense_hits, pair_cosines=cosines, data=data,
                 embeddings={"x": x, "y": y, "xv": xv, "yv": yv, "labels_val": data.labels[va], "prompts": pe})


def zero_shot_gain(studies: list, variant: str = "MGSAE", base: str = "SAE") -> tuple:
    """(mean, low, high): how many points of zero-shot accuracy from codes `variant` gains over `base`, with the 95%
    interval of a paired, two-stage bootstrap (seeds, then the validation images of each seed).

    Explained in chapters/multimodal-sae/02_experiments.md.
    """
    check_choice("variant", variant, tuple(VARIANTS))
    check_choice("base", base, tuple(VARIANTS))

    def gain(st):
        hits = _kept(st, "zero_shot_hits", "per-image hits").astype(float)
        return 100 * (hits[st.grid.index(VARIANTS[variant])] - hits[st.grid.index(VARIANTS[base])])

    return _over_seeds_and_items(studies, gain)


def below_dense(studies: list, variant: str = "MGSAE") -> tuple:
    """(mean, low, high): how many points of zero-shot accuracy the dense embedding has over the codes of
    `variant`, with the 95% interval of a paired, two-stage bootstrap (seeds, then the validation images of each seed).

    Explained in chapters/multimodal-sae/02_experiments.md.
    """
    check_choice("variant", variant, tuple(VARIANTS))

    def gap(st):
        hits = _kept(st, "zero_shot_hits", "per-image hits").astype(float)
        dense = _kept(st, "dense_hits", "per-image hits of the dense embedding").astype(float)
        return 100 * (dense - hits[st.grid.index(VARIANTS[variant])])

    return _over_seeds_and_items(studies, gap)


def paired_cosine_gain(studies: list, variant: str = "GSAE", base: str = "SAE") -> tuple:
    """(mean, low, high): how much higher the paired-code cosine of `variant` is than `base`'s, with the 95% interval
    of a paired, two-stage bootstrap (seeds, then the validation pairs of each seed).

    Explained in chapters/multimodal-sae/02_experiments.md.
    """
    check_choice("variant", variant, tuple(VARIANTS))
    check_choice("base", base, tuple(VARIANTS))

    def gain(st):
        cos = _kept(st, "pair_cosines", "per-pair cosines").astype(float)
        return cos[st.grid.index(VARIANTS[variant])] - cos[st.grid.index(VARIANTS[base])]

    return _over_seeds_and_items(studies, gain)


def _kept(st: Study, name: str, what: str) -> np.ndarray:
    value = getattr(st, name)
    if value is None:
        raise ValueError(f"the study of seed {st.seed} kept no {what}; rerun it with run_study")
    return np.asarray(value)


def _over_seeds_and_items(studies: list, per_item) -> tuple:
    """`cluster_bootstrap_ci` of the values `per_item(study)` (one per validation image) of every study, clustered
    by seed."""
    values = [per_item(st) for st in studies]
    seeds = [np.full(len(v), st.seed) for st, v in zip(studies, values)]
    return cluster_bootstrap_ci(np.concatenate(values), np.concatenate(seeds))


def dictionary_learning_peer(x: torch.Tensor, y: torch.Tensor, xv: torch.Tensor, yv: torch.Tensor, p: int, k: int,
                             seed: int = 0, max_iter: int = 1) -> dict:
    """scikit-learn's MiniBatchDictionaryLearning with p atoms on the pooled, centred training embeddings; codes by
    OMP with k non-zeros. Returns FVU on the evaluation pairs, seconds to fit, the codes and neuron counts.

    Explained in chapters/multimodal-sae/02_experiments.md.
    """
    from sklearn.decomposition import MiniBatchDictionaryLearning

    check_int("p", p)
    check_int("k", k)
    X = torch.cat([x, y]).numpy()
    mean = X.mean(0)
    with thread_limit(1):
        with stopwatch() as watch:
            dl = MiniBatchDictionaryLearning(n_components=p, alpha=0.1, batch_size=256, max_iter=max_iter,
                                             transform_algorithm="omp", transform_n_nonzero_coefs=k,
                                             random_state=seed)
            dl.fit(X - mean)
        cx, cy = dl.transform(xv.numpy() - mean), dl.transform(yv.numpy() - mean)
    rx, ry = cx @ dl.components_ + mean, cy @ dl.components_ + mean
    fvu = pair_fvu(xv, yv, torch.from_numpy(rx).float(), torch.from_numpy(ry).float())[0]
    counts = neuron_counts(torch.from_numpy(np.abs(cx)), torch.from_numpy(np.abs(cy)))
    return {"fvu": float(fvu), "seconds": watch.seconds, "counts": {k_: int(v[0]) for k_, v in counts.items()}}
