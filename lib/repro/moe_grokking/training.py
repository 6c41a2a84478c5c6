"""Training the book's MoE transformer on the grokking mixture, with every monitor evaluated at chosen steps.

Explained in chapters/moe-grokking/02_experiments.md (`train_monitored`, `run_experiments`).
"""
from __future__ import annotations

import numpy as np
import torch

from ..common import check_int
from .grokking_mix import ANSWER_POSITION, DEFAULT_GROUPS, GrokkingMix, make_grokking_mix
from ..nn import Transformer, train_lm
from .config import VARIANTS, GrokkingConfig, variant_config
from .metrics import (PROMPT_POSITIONS, aggregate_gates, layer_consistency, layer_pathway_distance, load_entropy,
                      pathway_distance, pathways, routing_entropy, weight_norm)

__all__ = ["log_steps", "evaluate", "train_monitored", "run_experiments"]


def log_steps(steps: int, n: int = 20, first: int = 10) -> np.ndarray:
    """About `n` log-spaced evaluation steps from `first` to `steps` (ints, unique, the last one is `steps`), after 0.

    Explained in chapters/moe-grokking/02_experiments.md.
    """
    check_int("steps", steps)
    check_int("n", n, 2)
    s = np.unique(np.geomspace(min(first, steps), steps, n).round().astype(int))
    return np.concatenate([[0], s])


def _answers(out, tokens) -> tuple[np.ndarray, np.ndarray]:
    """Per sample: is the answer token argmax-correct, and its cross-entropy loss."""
    logits = out.logits[:, ANSWER_POSITION - 1]
    target = tokens[:, ANSWER_POSITION]
    loss = torch.nn.functional.cross_entropy(logits, target, reduction="none").numpy()
    return (logits.argmax(-1) == target).numpy(), loss


def _routing_monitors(model: Transformer, out, monitor_idx: dict, correct, loss, k: int) -> dict:
    """Routing and load entropy over the prompt, and per group of monitored samples the pathway distance (overall and
    per layer), the layer consistency and the samples' correctness and loss."""
    E = model.cfg.n_experts
    rec = {"routing_entropy": routing_entropy([lg[:, :ANSWER_POSITION] for lg in out.router_logits]),
           "load_entropy": load_entropy([ex[:, :ANSWER_POSITION] for ex in out.experts], E)}
    agg = aggregate_gates(out.gates)
    W = [model.blocks[i].mlp.router.weight for i in model.moe_blocks]
    dist, layer_dist, cons, mon_correct, mon_loss = [], [], [], [], []
    for g in range(len(monitor_idx)):
        idx = monitor_idx[g]
        paths = pathways(agg[idx], k)
        dist.append(pathway_distance(paths, E))
        layer_dist.append(layer_pathway_distance(paths))
        cons.append(layer_consistency(agg[idx], W).mean())
        mon_correct.append(correct[idx])
        mon_loss.append(loss[idx])
    rec.update(pathway_distance=np.array(dist), layer_distance=np.array(layer_dist), consistency=np.array(cons),
               monitor_correct=np.array(mon_correct), monitor_loss=np.array(mon_loss),
               router_probs=_quantised_router_probs(out.router_logits, monitor_idx),
               router_weights=np.stack([w.detach().numpy() for w in W]).astype(np.float16))
    return rec


def _quantised_router_probs(router_logits, monitor_idx: dict) -> np.ndarray:
    """The router's softmax at the prompt positions of the monitored samples, as uint8 (p * 255, rounded): shape
    (groups, n, L, prompt positions, E). Stored so that every pathway metric can be recomputed from a log."""
    probs = torch.stack([torch.softmax(lg[:, list(PROMPT_POSITIONS)].float(), -1) for lg in router_logits], 1)
    rows = np.stack([probs[torch.as_tensor(monitor_idx[g])].numpy() for g in range(len(monitor_idx))])
    return np.round(rows * 255).astype(np.uint8)


@torch.no_grad()
def evaluate(model: Transformer, mix: GrokkingMix, monitor_idx: dict, k: int) -> dict:
    """Accuracy and loss per group and split, and (MoE models only) the routing monitors on the monitored training
    samples. Explained in chapters/moe-grokking/02_experiments.md."""
    model.eval()
    G = mix.n_groups
    rec = {}
    for split, tokens, groups in (("train", mix.train_tokens, mix.train_group), ("test", mix.test_tokens,
                                                                                   mix.test_group)):
        out = model(tokens)
        correct, loss = _answers(out, tokens)
        rec[f"{split}_acc"] = np.array([correct[groups == g].mean() for g in range(G)])
        rec[f"{split}_loss"] = np.array([loss[groups == g].mean() for g in range(G)])
        if split == "train" and model.moe_blocks:
            rec.update(_routing_monitors(model, out, monitor_idx, correct, loss, k))
    rec["weight_norm"] = weight_norm(model)
    model.train()
    return rec


def train_monitored(mix: GrokkingMix, cfg: GrokkingConfig = GrokkingConfig(), seed: int = 0) -> dict:
    """Train the book's MoE transformer on `mix` with AdamW, evaluating at `log_steps(cfg.steps, cfg.n_evals)`.

    Returns a dict of numpy arrays, one row per evaluation: `steps`; per group `train_acc`, `test_acc`, `train_loss`,
    `test_loss`, `pathway_distance`, `consistency`; `layer_distance` (evals, groups, L); `routing_entropy` and
    `load_entropy` (evals, L); `weight_norm`; per monitored sample `monitor_correct` and `monitor_loss`
    (evals, groups, n), n = min(n_monitor, smallest group's training set); `router_probs` (evals, groups, n, L, 3, E),
    the router's softmax at the monitored samples' prompt tokens as uint8 (p * 255), and `router_weights`
    (evals, L, E, d_model) as float16, from which `paper_curves` recomputes the paper's metrics; plus the per-step
    training `loss` and `seconds`.
    The dense twin (`cfg.dense`) has no router: its log holds only accuracies, losses, the weight norm and timing.
    Explained in chapters/moe-grokking/02_experiments.md.
    """
    if not isinstance(mix, GrokkingMix):
        raise ValueError(f"mix must be a GrokkingMix, got {type(mix).__name__}")
    if not isinstance(cfg, GrokkingConfig):
        raise ValueError(f"cfg must be a GrokkingConfig, got {type(cfg).__name__}")
    if cfg.n_experts < 1 or cfg.n_layers < 2:
        raise ValueError("cfg needs n_experts >= 1 and n_layers >= 2 (layer consistency compares layers)")
    torch.manual_seed(seed)
    model = Transformer(cfg.model_config(mix.vocab_size))
    if cfg.freeze_router:
        model.freeze_routers()
    rng = np.random.default_rng(seed)
    n_monitor = min(cfg.n_monitor, int(np.bincount(mix.train_group).min()))   # the same number in every group
    monitor_idx = {g: np.sort(rng.choice(np.nonzero(mix.train_group == g)[0], size=n_monitor, replace=False))
                   for g in range(mix.n_groups)}
    eval_at = log_steps(cfg.steps, cfg.n_evals)
    records = [evaluate(model, mix, monitor_idx, cfg.top_k)]

    def callback(step, m, loss):
        if step in eval_at:
            records.append(evaluate(m, mix, monitor_idx, cfg.top_k))

    hist = train_lm(model, mix.sampler(cfg.batch_size, seed=seed), cfg.steps, lr=cfg.lr,
                    weight_decay=cfg.weight_decay, balance_coef=cfg.balance_coef, callback=callback)
    log = {key: np.array([r[key] for r in records]) for key in records[0]}
    log.update(steps=eval_at, loss=np.array(hist["loss"]), seconds=hist["seconds"])
    return log


def run_experiments(seed: int, cfg: GrokkingConfig = GrokkingConfig(), p: int = 31, variants=VARIANTS,
                    groups=DEFAULT_GROUPS) -> dict:
    """Train every variant on the mixture `make_grokking_mix(p, groups, seed=seed)`; returns {variant: log}.

    This is what `make_shipped_run` saves under data/moe-grokking/runs/ (one variant per file) and what chapters/moe-grokking/02_experiments.md
    reruns at scale="full".
    """
    mix = make_grokking_mix(p=p, groups=groups, seed=seed)
    return {v: train_monitored(mix, variant_config(cfg, v), seed=seed) for v in variants}


