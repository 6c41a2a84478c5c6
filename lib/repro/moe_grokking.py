"""Monitoring memorization and generalization from a mixture-of-experts model's routing (Li, Fan & Zhou, ICLR 2026).

Explained in chapters/moe-grokking/01_theory; used in chapters/moe-grokking/02_experiments.

The paper's two metrics, as we reconstruct them (the paper's exact definitions were not available to us; every choice
marked "ours" is ours):

- **Pathway.** For a sample i and MoE layer l, aggregate the renormalised top-k gate vectors g_{tau,l} of the
  sample's prompt tokens tau into a_{i,l} = mean_tau g_{tau,l} (ours: the mean over the prompt positions
  [op, a, b], not the answer token, which the model reads only after predicting it). The layer's entry is the sorted
  top-k experts of a_{i,l}; the pathway s_i concatenates the entries of all layers, each expert written as the symbol
  (l, e), so that expert 3 of layer 1 and expert 3 of layer 2 are different symbols (ours).
- **Pathway distance** of a group: the mean over pairs of its samples of the Levenshtein distance between their
  pathways, divided by the pathway length L*k (ours), computed by `rapidfuzz`.
- **Layer consistency** of a sample: the mean over adjacent layers of cos(e_{i,l}, e_{i,l+1}), with
  e_{i,l} = sum_j a_{i,l,j} u_j^{(l)} and expert j's embedding u_j^{(l)} = its router row W_r^{(l)}[j] (ours: it lives
  in the residual stream, so rows of different layers can be compared). A group's value is the mean over samples.

Also here: routing and load entropy, the weight norm, crossing times and onsets, per-sample memorization times,
rank correlations, the numbers behind the chapter's claims (`group_times`, `claim_quantities`), and
`train_monitored`, which trains the book's MoE transformer on `repro.data.grokking_mix` and evaluates all of this at
chosen steps.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass

import numpy as np
import torch
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist
from scipy.stats import spearmanr

from .data.grokking_mix import ANSWER_POSITION, GrokkingMix
from .nn import Transformer, TransformerConfig, train_lm

PROMPT_POSITIONS = (0, 1, 2)


# ---------------------------------------------------------------------------------------------- edit distance
def levenshtein(s, t) -> int:
    """Edit distance between two sequences (insertions, deletions, substitutions cost 1): the textbook dynamic
    programme, kept short for reading. `pathway_distance` uses rapidfuzz, which computes the same number fast."""
    s, t = list(s), list(t)
    prev = list(range(len(t) + 1))
    for i, x in enumerate(s, 1):
        cur = [i]
        for j, y in enumerate(t, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


# ---------------------------------------------------------------------------------------------- pathways
def _check_gates(gates) -> list[torch.Tensor]:
    if isinstance(gates, torch.Tensor):
        gates = [gates]
    gates = list(gates)
    if not gates or any(not isinstance(g, torch.Tensor) or g.dim() != 3 for g in gates):
        raise ValueError("gates must be a non-empty list of (N, T, E) tensors, one per MoE layer")
    if len({tuple(g.shape) for g in gates}) != 1:
        raise ValueError(f"gates must all have the same shape, got {[tuple(g.shape) for g in gates]}")
    return gates


def aggregate_gates(gates, positions=PROMPT_POSITIONS) -> np.ndarray:
    """a_{i,l} = mean over `positions` of the gate vectors: (N, L, E) from a list of L tensors (N, T, E)."""
    gates = _check_gates(gates)
    T = gates[0].shape[1]
    positions = list(positions)
    if not positions or any(not 0 <= q < T for q in positions):
        raise ValueError(f"positions must be a non-empty list of positions in 0..{T - 1}, got {positions!r}")
    return np.stack([g[:, positions].detach().float().mean(1).cpu().numpy() for g in gates], axis=1)


def pathways(agg: np.ndarray, k: int) -> np.ndarray:
    """The pathway of each sample: (N, L, k) expert ids, the top-k of a_{i,l} sorted by id within each layer."""
    agg = np.asarray(agg)
    if agg.ndim != 3:
        raise ValueError(f"agg must have shape (N, L, E), got {agg.shape}")
    if isinstance(k, bool) or not 1 <= int(k) <= agg.shape[2]:
        raise ValueError(f"k must be between 1 and E={agg.shape[2]}, got {k!r}")
    top = np.argsort(-agg, axis=2, kind="stable")[:, :, :int(k)]
    return np.sort(top, axis=2)


def pathway_strings(paths: np.ndarray, n_experts: int) -> list[str]:
    """Each pathway as a string of symbols, one per (layer, expert) pair: chr(0x100 + l*E + e). Distinct layers use
    distinct symbols (our choice)."""
    paths = np.asarray(paths)
    if paths.ndim != 3:
        raise ValueError(f"paths must have shape (N, L, k), got {paths.shape}")
    if paths.size and (paths.min() < 0 or paths.max() >= n_experts):
        raise ValueError(f"paths must hold expert ids in 0..{n_experts - 1}")
    L = paths.shape[1]
    codes = paths + (np.arange(L) * n_experts)[None, :, None]
    return ["".join(chr(0x100 + int(c)) for c in row.ravel()) for row in codes]


def pairwise_mean(matrix: np.ndarray) -> float:
    """Mean of the strictly upper triangle of a square matrix (the mean over unordered pairs)."""
    n = matrix.shape[0]
    if n < 2:
        raise ValueError("need at least two samples to compare pathways")
    iu = np.triu_indices(n, 1)
    return float(matrix[iu].mean())


def pathway_distance(paths: np.ndarray, n_experts: int) -> float:
    """Mean over pairs of samples of Levenshtein(s_i, s_j) / (L*k): 0 when every sample takes the same pathway."""
    paths = np.asarray(paths)
    strings = pathway_strings(paths, n_experts)
    D = cdist(strings, strings, scorer=Levenshtein.distance, dtype=np.int32, workers=1)
    return pairwise_mean(D) / (paths.shape[1] * paths.shape[2])


def layer_pathway_distance(paths: np.ndarray) -> np.ndarray:
    """Per layer l, the mean over pairs of the fraction of the k expert slots in which two samples differ at that
    layer (the pathway distance restricted to one layer). Shape (L,)."""
    paths = np.asarray(paths)
    if paths.ndim != 3 or paths.shape[0] < 2:
        raise ValueError(f"paths must have shape (N >= 2, L, k), got {paths.shape}")
    out = []
    for layer in range(paths.shape[1]):
        s = ["".join(chr(0x100 + int(e)) for e in row) for row in paths[:, layer]]
        out.append(pairwise_mean(cdist(s, s, scorer=Levenshtein.distance, dtype=np.int32, workers=1)))
    return np.array(out) / paths.shape[2]


def layer_consistency(agg: np.ndarray, router_weights) -> np.ndarray:
    """C_i = mean over l of cos(e_{i,l}, e_{i,l+1}), e_{i,l} = sum_j a_{i,l,j} W_r^{(l)}[j]. Returns (N,).

    `agg` (N, L, E) aggregated gates; `router_weights` a list (or array) of L router matrices (E, d).
    """
    agg = np.asarray(agg, dtype=np.float64)
    W = np.stack([np.asarray(w.detach().cpu() if isinstance(w, torch.Tensor) else w, dtype=np.float64)
                  for w in router_weights])
    if agg.ndim != 3 or W.ndim != 3 or W.shape[:2] != agg.shape[1:]:
        raise ValueError(f"agg (N, L, E) and router_weights (L, E, d) must agree, got {agg.shape} and {W.shape}")
    if agg.shape[1] < 2:
        raise ValueError("layer consistency needs at least two MoE layers")
    e = np.einsum("nle,led->nld", agg, W)
    e = e / np.maximum(np.linalg.norm(e, axis=2, keepdims=True), 1e-12)
    return (e[:, :-1] * e[:, 1:]).sum(2).mean(1)


# ---------------------------------------------------------------------------------------------- other monitors
def routing_entropy(router_logits) -> np.ndarray:
    """Mean per-token entropy (nats) of the router's softmax, per layer: (L,). Low means confident routing."""
    out = []
    for lg in _check_gates(router_logits):
        logp = torch.log_softmax(lg.detach().float(), -1)
        out.append(float(-(logp.exp() * logp).sum(-1).mean()))
    return np.array(out)


def load_entropy(experts, n_experts: int) -> np.ndarray:
    """Entropy (nats) of each layer's expert load, the share of top-k slots each expert receives: (L,).
    log(E) is perfectly balanced; 0 is total collapse onto one expert."""
    out = []
    for ex in experts:
        counts = np.bincount(np.asarray(ex.detach().cpu()).ravel(), minlength=n_experts).astype(float)
        q = counts / counts.sum()
        q = q[q > 0]
        out.append(float(-(q * np.log(q)).sum()))
    return np.array(out)


def weight_norm(model: torch.nn.Module) -> float:
    """The L2 norm of all parameters together (the Omnigrok-style proxy of grokking)."""
    return float(torch.sqrt(sum((p.detach().float() ** 2).sum() for p in model.parameters())))


# ---------------------------------------------------------------------------------------------- times
def time_to_reach(steps, values, threshold: float) -> float:
    """The first step at which `values` reaches `threshold` (>=); NaN if it never does."""
    steps, values = np.asarray(steps), np.asarray(values, dtype=float)
    if steps.shape != values.shape or steps.ndim != 1:
        raise ValueError(f"steps and values must be 1-d and of equal length, got {steps.shape} and {values.shape}")
    hit = np.nonzero(values >= threshold)[0]
    return float(steps[hit[0]]) if hit.size else float("nan")


def generalization_onset(steps, test_acc, chance: float) -> float:
    """First step where test accuracy exceeds chance + 0.5*(final - chance) (the brief's definition); NaN when the
    final accuracy is not above chance."""
    test_acc = np.asarray(test_acc, dtype=float)
    final = test_acc[-1]
    if final <= chance:
        return float("nan")
    steps = np.asarray(steps)
    hit = np.nonzero(test_acc > chance + 0.5 * (final - chance))[0]
    return float(steps[hit[0]]) if hit.size else float("nan")


def memorization_times(steps, correct, loss, eps: float = 0.1) -> np.ndarray:
    """Per sample, the first checkpoint from which it stays argmax-correct with loss < `eps` to the end (NaN if it
    never settles). `correct` and `loss` are (checkpoints, samples)."""
    steps = np.asarray(steps)
    ok = np.asarray(correct, dtype=bool) & (np.asarray(loss, dtype=float) < eps)
    if ok.ndim != 2 or ok.shape[0] != steps.size:
        raise ValueError(f"correct and loss must be (checkpoints={steps.size}, samples), got {ok.shape}")
    stays = np.flip(np.cumprod(np.flip(ok, 0), 0), 0).astype(bool)     # ok at this checkpoint and every later one
    first = np.argmax(stays, axis=0)
    return np.where(stays.any(0), steps[first].astype(float), np.nan)


def drop_from_peak(steps, values, start: float) -> float:
    """(peak - last) / peak, the peak taken over steps >= `start`: how far a curve falls from its post-`start`
    maximum to the end of training."""
    steps, values = np.asarray(steps), np.asarray(values, dtype=float)
    after = values[steps >= start]
    if after.size == 0 or not np.isfinite(start):
        return float("nan")
    peak = after.max()
    return float((peak - values[-1]) / peak) if peak > 0 else 0.0


def smooth(values, width: int = 3) -> np.ndarray:
    """Centred running mean over `width` consecutive evaluations (fewer at the ends). The routing metrics are
    measured on a hundred samples and flicker from one evaluation to the next; the chapter compares smoothed values
    (our choice) so that a single noisy evaluation cannot make a peak."""
    values = np.asarray(values, dtype=float)
    if isinstance(width, bool) or int(width) < 1 or values.ndim != 1:
        raise ValueError(f"width must be a positive integer and values 1-d, got {width!r} and {values.shape}")
    h = int(width) // 2
    return np.array([values[max(0, i - h):i + h + 1].mean() for i in range(values.size)])


def value_at(steps, values, step: float) -> float:
    """The value at the first checkpoint at or after `step`."""
    steps, values = np.asarray(steps), np.asarray(values, dtype=float)
    i = np.searchsorted(steps, step)
    return float(values[min(i, len(values) - 1)]) if np.isfinite(step) else float("nan")


def rank_correlation(x, y) -> float:
    """Spearman's rank correlation, NaN when either series is constant."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.size < 3:
        raise ValueError(f"x and y must have the same length of at least 3, got {x.shape} and {y.shape}")
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(spearmanr(x, y).statistic)


def log_steps(steps: int, n: int = 20, first: int = 10) -> np.ndarray:
    """About `n` log-spaced evaluation steps from `first` to `steps` (ints, unique, the last one is `steps`)."""
    if int(steps) < 1 or int(n) < 2:
        raise ValueError(f"steps must be >= 1 and n >= 2, got {steps!r}, {n!r}")
    s = np.unique(np.geomspace(min(first, steps), steps, n).round().astype(int))
    return np.concatenate([[0], s])


# ---------------------------------------------------------------------------------------------- the claims
#: Marks of memorization and generalization. The brief's: training accuracy 0.99, test accuracy 0.9. Ours (fixed
#: after seeing seed 0, before reading seeds 1 and 2; chapters/moe-grokking/02_experiments says why):
#: a group is fitted at training accuracy 0.95 and counts as learning its rule if it ends at test accuracy 0.5.
MEMORIZED, GENERALIZED, FITTED, LEARNS_RULE = 0.99, 0.9, 0.95, 0.5


def group_times(log: dict, control: int, chance: float) -> dict:
    """Per group of one run's log: the steps `t_mem` (train acc. 0.99), `t_fit` (0.95), `t_gen` (test acc. 0.9) and
    the generalization `onset` (NaN where never), and the lists `rules` (every group but `control`), `generalizing`
    (rule groups that reach test acc. 0.9) and `learners` (rule groups that end at test acc. 0.5 or more).

    The random-label `control` may never reach 0.95 or 0.99; its times are then the step of its best training accuracy.
    """
    steps, train, test = log["steps"], log["train_acc"], log["test_acc"]
    n_groups = train.shape[1]
    if not 0 <= control < n_groups:
        raise ValueError(f"control must index one of the log's {n_groups} groups, got {control!r}")
    times = {name: np.array([time_to_reach(steps, curve[:, g], level) for g in range(n_groups)])
             for name, curve, level in [("t_mem", train, MEMORIZED), ("t_fit", train, FITTED),
                                        ("t_gen", test, GENERALIZED)]}
    times["onset"] = np.array([generalization_onset(steps, test[:, g], chance) for g in range(n_groups)])
    for name in ("t_mem", "t_fit"):
        if not np.isfinite(times[name][control]):
            times[name][control] = steps[np.argmax(train[:, control])]
    rules = [g for g in range(n_groups) if g != control]
    times.update(rules=rules, generalizing=[g for g in rules if np.isfinite(times["t_gen"][g])],
                 learners=[g for g in rules if test[-1, g] >= LEARNS_RULE])
    return times


def _ratio(a: float, b: float) -> float:
    return float(a / b) if np.isfinite(a) and np.isfinite(b) and b > 0 else float("nan")


def _spread(times: np.ndarray) -> float:
    """Slowest over fastest of two or more times; NaN with fewer."""
    return _ratio(np.max(times), np.min(times)) if len(times) >= 2 else float("nan")


def claim_quantities(logs: dict, control: int, chance: float, n_experts: int, min_drop: float = 0.10) -> dict:
    """The numbers behind every claim of chapters/moe-grokking/02_experiments, from the logs of one seed's runs
    ({variant: log}, at least "main" and "frozen"). The routing metrics are smoothed over 3 evaluations first.

    Returns the main run's `group_times`, the per-group arrays `drop` (pathway distance, relative fall from its peak
    after the fitted step to the end) and `c_rise` (consistency, end minus fitted step), and the scalars the
    chapter checks: `n_grok`, `async_ratio` (brief's marks), `n_lag`, `onset_async` (ours), `drop_min`, `drop_mean`,
    `control_ratio` (the control's drop over the rule groups' mean drop; NaN unless that mean reaches `min_drop`,
    the claim's own 10%, since "less than half as much" compares with a fall), `c_rise_min`, `frozen_move`,
    `frozen_drop_mean`, `load_frac` (the main run's mean load entropy over log `n_experts`, first evaluation left
    out). Pathway checks read the `learners`, or every rule group when none learns.
    """
    missing = {"main", "frozen"} - set(logs)
    if missing:
        raise ValueError(f"logs lack the run(s) {sorted(missing)}; they have {sorted(logs)}")
    main, frozen = logs["main"], logs["frozen"]
    t = group_times(main, control, chance)
    t_fit, onset, rules = t["t_fit"], t["onset"], t["rules"]
    gen = t["learners"] or rules
    n_groups, steps = len(t_fit), main["steps"]
    sm = {(v, key): np.stack([smooth(logs[v][key][:, g]) for g in range(n_groups)], 1)
          for v in ("main", "frozen") for key in ("pathway_distance", "consistency")}
    drop = np.array([drop_from_peak(steps, sm["main", "pathway_distance"][:, g], t_fit[g]) for g in range(n_groups)])
    c_rise = np.array([sm["main", "consistency"][-1, g] - value_at(steps, sm["main", "consistency"][:, g], t_fit[g])
                       for g in range(n_groups)])
    f_times = group_times(frozen, control, chance)
    f_steps = frozen["steps"]
    f_move = [abs(sm["frozen", "consistency"][-1, g] - value_at(f_steps, sm["frozen", "consistency"][:, g],
                                                               f_times["t_fit"][g])) for g in rules]
    f_drop = [drop_from_peak(f_steps, sm["frozen", "pathway_distance"][:, g], f_times["t_fit"][g]) for g in gen]
    lag = [_ratio(t["t_gen"][g], t["t_mem"][g]) for g in t["generalizing"]]
    onset_lag = [_ratio(onset[g], t_fit[g]) for g in t["learners"]]
    gen_times, learner_onsets = t["t_gen"][t["generalizing"]], onset[t["learners"]]
    drop_mean = float(np.mean(drop[gen]))
    return {**t, "smoothed": sm, "drop": drop, "c_rise": c_rise,
            "n_grok": int(sum(r >= 2 for r in lag)), "async_ratio": _spread(gen_times),
            "n_lag": int(sum(r >= 2 for r in onset_lag)), "onset_async": _spread(learner_onsets),
            "drop_min": float(np.min(drop[gen])), "drop_mean": drop_mean,
            "control_ratio": _ratio(drop[control], drop_mean) if drop_mean >= min_drop else float("nan"),
            "c_rise_min": float(np.min(c_rise[gen])), "c_rise_mean": float(np.mean(c_rise[gen])),
            "frozen_move": float(np.nanmax(f_move)) if np.isfinite(f_move).any() else float("nan"),
            "frozen_drop_mean": float(np.nanmean(f_drop)) if np.isfinite(f_drop).any() else float("nan"),
            "load_frac": float(main["load_entropy"][1:].mean() / np.log(n_experts))}


# ---------------------------------------------------------------------------------------------- training
@dataclass
class GrokkingConfig:
    """The run of chapters/moe-grokking/02_experiments: model, optimiser and monitoring sizes."""

    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    n_experts: int = 4
    top_k: int = 2
    d_expert: int = 128
    lr: float = 2e-3
    weight_decay: float = 1.0
    balance_coef: float = 0.01
    batch_size: int = 512
    steps: int = 8000
    n_evals: int = 24
    n_monitor: int = 128
    freeze_router: bool = False
    dense: bool = False

    def model_config(self, vocab_size: int) -> TransformerConfig:
        """The transformer: MoE blocks, or with `dense=True` its dense twin, whose MLP is as wide as the top_k experts
        that a token uses (the same active parameters per token)."""
        sizes = dict(vocab_size=vocab_size, max_len=4, d_model=self.d_model, n_layers=self.n_layers,
                     n_heads=self.n_heads)
        if self.dense:
            return TransformerConfig(**sizes, d_mlp=self.top_k * self.d_expert)
        return TransformerConfig(**sizes, n_experts=self.n_experts, top_k=self.top_k, d_expert=self.d_expert)


@torch.no_grad()
def evaluate(model: Transformer, mix: GrokkingMix, monitor_idx: dict, k: int) -> dict:
    """Accuracy and loss per group and split, and (MoE models only) the routing monitors on the monitored training
    samples."""
    model.eval()
    G, E = mix.n_groups, model.cfg.n_experts
    rec = {}
    for split, tokens, groups in (("train", mix.train_tokens, mix.train_group), ("test", mix.test_tokens,
                                                                                   mix.test_group)):
        out = model(tokens)
        logits = out.logits[:, ANSWER_POSITION - 1]
        target = tokens[:, ANSWER_POSITION]
        loss = torch.nn.functional.cross_entropy(logits, target, reduction="none").numpy()
        correct = (logits.argmax(-1) == target).numpy()
        rec[f"{split}_acc"] = np.array([correct[groups == g].mean() for g in range(G)])
        rec[f"{split}_loss"] = np.array([loss[groups == g].mean() for g in range(G)])
        if split == "train" and model.moe_blocks:
            rec["routing_entropy"] = routing_entropy([lg[:, :ANSWER_POSITION] for lg in out.router_logits])
            rec["load_entropy"] = load_entropy([ex[:, :ANSWER_POSITION] for ex in out.experts], E)
            agg = aggregate_gates(out.gates)
            W = [model.blocks[i].mlp.router.weight for i in model.moe_blocks]
            dist, layer_dist, cons, mon_correct, mon_loss = [], [], [], [], []
            for g in range(G):
                idx = monitor_idx[g]
                paths = pathways(agg[idx], k)
                dist.append(pathway_distance(paths, E))
                layer_dist.append(layer_pathway_distance(paths))
                cons.append(layer_consistency(agg[idx], W).mean())
                mon_correct.append(correct[idx])
                mon_loss.append(loss[idx])
            rec.update(pathway_distance=np.array(dist), layer_distance=np.array(layer_dist),
                       consistency=np.array(cons), monitor_correct=np.array(mon_correct),
                       monitor_loss=np.array(mon_loss))
    rec["weight_norm"] = weight_norm(model)
    model.train()
    return rec


def train_monitored(mix: GrokkingMix, cfg: GrokkingConfig = GrokkingConfig(), seed: int = 0) -> dict:
    """Train the book's MoE transformer on `mix` with AdamW, evaluating at `log_steps(cfg.steps, cfg.n_evals)`.

    Returns a dict of numpy arrays, one row per evaluation: `steps`; per group `train_acc`, `test_acc`, `train_loss`,
    `test_loss`, `pathway_distance`, `consistency`; `layer_distance` (evals, groups, L); `routing_entropy` and
    `load_entropy` (evals, L); `weight_norm`; per monitored sample `monitor_correct` and `monitor_loss`
    (evals, groups, n), n = min(n_monitor, smallest group's training set); plus the per-step training `loss` and `seconds`.
    The dense twin (`cfg.dense`) has no router: its log holds only accuracies, losses, the weight norm and timing.
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


def save_log(path, logs: dict, **provenance) -> None:
    """Save {run name: log} to one .npz with a JSON provenance string (command, seed, commit, time ...)."""
    def small(v):
        v = np.asarray(v)
        return v.astype(np.float32) if v.dtype == np.float64 and v.ndim else v
    flat = {f"{name}/{key}": small(v) for name, log in logs.items() for key, v in log.items()}
    np.savez_compressed(path, provenance=np.array(json.dumps(provenance)), **flat)


def load_log(path) -> tuple[dict, dict]:
    """Read a file written by `save_log`: ({run name: log}, provenance)."""
    with np.load(path, allow_pickle=False) as z:
        prov = json.loads(str(z["provenance"]))
        logs: dict = {}
        for key in z.files:
            if key == "provenance":
                continue
            name, field = key.split("/", 1)
            v = z[key]
            logs.setdefault(name, {})[field] = v.item() if v.ndim == 0 else v
    return logs, prov


#: The runs of the chapter: the MoE as configured, its routers frozen at initialisation, no balancing loss, and the
#: dense twin with the same active parameters per token.
VARIANTS = ("main", "frozen", "no-balance", "dense")


def variant_config(cfg: GrokkingConfig, variant: str) -> GrokkingConfig:
    """`cfg` changed for one of `VARIANTS`."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    changes = {"main": {}, "frozen": {"freeze_router": True}, "no-balance": {"balance_coef": 0.0},
               "dense": {"dense": True, "balance_coef": 0.0}}[variant]
    return GrokkingConfig(**{**cfg.__dict__, **changes})


def run_experiments(seed: int, cfg: GrokkingConfig = GrokkingConfig(), p: int = 31, variants=VARIANTS) -> dict:
    """Train every variant on the mixture `make_grokking_mix(p, seed=seed)`; returns {variant: log}.

    This is what `make_shipped_runs` saves under data/moe-grokking/ and what the chapter reruns at scale="full".
    """
    from .data.grokking_mix import make_grokking_mix
    mix = make_grokking_mix(p=p, seed=seed)
    return {v: train_monitored(mix, variant_config(cfg, v), seed=seed) for v in variants}


def make_shipped_runs(path, seed: int, cfg: GrokkingConfig = GrokkingConfig(), p: int = 31, command: str = "") -> dict:
    """Run `run_experiments` and save the logs with their provenance (command, seed, config, commit, time)."""
    from .nn.checkpoint import current_commit
    logs = run_experiments(seed, cfg, p)
    save_log(path, logs, command=command, seed=int(seed), p=int(p), config=cfg.__dict__, commit=current_commit(),
             time=timestamp(), seconds={v: round(float(log["seconds"]), 1) for v, log in logs.items()})
    return logs


def timestamp() -> str:
    """The current UTC time, ISO format."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
