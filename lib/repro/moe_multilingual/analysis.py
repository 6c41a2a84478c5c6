"""Everything the experiments notebook computes from one trained model: divergence by layer, CKA, task accuracy,
task and language experts, and the steering table.

Explained in chapters/moe-multilingual/02_experiments.md. `analyse(model, corpus)` returns a `Study`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from ..common import bootstrap_ci, check_int, thread_limit
from .cka import linear_cka
from .corpus import Corpus
from .languages import N_NOUNS
from .divergence import divergence_by_layer, divergence_items, sequence_routing
from .experts import expert_counts, expert_fractions, expert_shift, overlap_by_tau
from .steering import steered, task_correct

__all__ = ["Study", "layer_windows", "routing_views", "steering_plans", "analyse", "observables", "item_replicates",
           "seed_item_interval", "CONDITIONS"]

#: Steering conditions: (name, which experts, which layers, mode). "none" is the unsteered baseline.
CONDITIONS = (("none", None, None, None),
              ("task, middle", "task", "middle", "soft"),
              ("task, first+last", "task", "edges", "soft"),
              ("language, middle", "language", "middle", "soft"),
              ("random, middle", "random", "middle", "soft"),
              ("task forced on, middle", "task", "middle", "on"),
              ("task off, middle", "task", "middle", "off"))


def layer_windows(n_layers: int) -> dict[str, list[int]]:
    """The layer windows of the chapter: the middle third, and the first and the last layer.

    Explained in chapters/moe-multilingual/02_experiments.md.
    """
    n = check_int("n_layers", n_layers, 3)
    third = n // 3
    return {"middle": list(range(third, n - third)), "edges": [0, n - 1]}


@dataclass
class Study:
    """The results for one model (chapters/moe-multilingual/02_experiments.md); arrays indexed by language first."""
    names: list[str]
    div: np.ndarray                 # (languages, layers) normalised JS divergence from English
    div_raw: np.ndarray             # (languages, layers) plain JS divergence (nats)
    cka: np.ndarray                 # (languages, layers) linear CKA with English, pooled hidden states
    accuracy: np.ndarray            # (languages,) on the held-out problems, unsteered
    chance: float
    task_shift: np.ndarray          # (layers, E)
    language_shift: np.ndarray      # (trained non-English languages, layers, E)
    taus: np.ndarray
    overlap: np.ndarray             # (taus, 3): task experts, language experts, intersection
    plans: dict                     # condition -> {language: {layer: experts}}
    correct: dict                   # condition -> (languages, problems) bool
    windows: dict
    trained: list[int]
    extra: dict = field(default_factory=dict)

    @property
    def middle_div(self) -> np.ndarray:
        return self.div[:, self.windows["middle"]].mean(1)

    def delta(self, condition: str, languages=None) -> np.ndarray:
        """Per (language, problem) item, steered minus unsteered correctness, over `languages` (default: the trained
        non-English ones)."""
        ls = self.others if languages is None else list(languages)
        return (self.correct[condition][ls].astype(float) - self.correct["none"][ls].astype(float)).ravel()

    @property
    def others(self) -> list[int]:
        return [l for l in self.trained if l != 0]

    def delta_ci(self, condition: str, seed: int = 0) -> tuple[float, float, float]:
        """(mean, low, high): the mean change in non-English accuracy and its 95% bootstrap interval over items."""
        d = self.delta(condition)
        if np.all(d == d[0]):
            return float(d[0]), float(d[0]), float(d[0])
        return bootstrap_ci(d, seed=seed)


def _routing_and_states(model, tokens, masks):
    """Per language: sequence routing (layers, n, E) and pooled residual states (layers, n, d)."""
    routing, states = [], []
    for t, m in zip(tokens, masks):
        out = model(t)
        routing.append(np.stack([sequence_routing(g, m) for g in out.gates]))
        w = m.to(torch.float32).unsqueeze(-1)
        states.append(np.stack([((r * w).sum(1) / w.sum(1)).numpy() for r in out.residuals[1:]]))
    return np.stack(routing), np.stack(states)


@torch.no_grad()
def routing_views(model, tokens, masks, items: bool = False) -> tuple:
    """On parallel sentences (languages, n, length) with content masks: the normalised divergence from English, the
    plain JSD and the linear CKA with English of the pooled hidden states, each (languages, layers); with
    `items=True`, also the normalised divergence of each sentence, (languages, layers, n), whose mean is the first.

    Explained in chapters/moe-multilingual/02_experiments.md.
    """
    model.eval()
    with thread_limit(1):
        routing, states = _routing_and_states(model, tokens, masks)
    cka = np.array([[linear_cka(states[0, j], states[l, j]) for j in range(states.shape[1])]
                    for l in range(len(states))])
    per_item = divergence_items(routing)
    views = (per_item.mean(-1), divergence_by_layer(routing, normalized=False), cka)
    return views + (per_item,) if items else views


def steering_plans(task_shift, language_shift, others, windows, n_languages, n_experts, seed=0) -> dict:
    """For each steering condition and language, the {layer: experts} plan: one expert per layer of the window, the
    one with the largest shift (task: English arithmetic; language: that language's sentences; English and the
    unseen language have no language experts and are not steered then), or a random expert other than the task
    expert. Explained in chapters/moe-multilingual/02_experiments.md."""
    rng = np.random.default_rng(seed)
    task_top = np.asarray(task_shift).argmax(-1)
    random_pick = {j: int(rng.choice([k for k in range(n_experts) if k != task_top[j]]))
                   for j in range(len(task_top))}
    plans = {}
    for name, who, where, _ in CONDITIONS:
        plans[name] = {}
        for l in range(n_languages):
            layers = windows[where] if where else []
            if who == "task":
                plan = {j: [int(task_top[j])] for j in layers}
            elif who == "random":
                plan = {j: [random_pick[j]] for j in layers}
            elif who == "language" and l in others:
                lang_top = np.asarray(language_shift[others.index(l)]).argmax(-1)
                plan = {j: [int(lang_top[j])] for j in layers}
            else:
                plan = {}
            plans[name][l] = plan
    return plans


@torch.no_grad()
def analyse(model, corpus: Corpus, n_sentences: int = 200, n_task_rows: int = 200, n_questions: int = 200,
            seed: int = 0,
            taus=np.round(np.arange(0.0, 0.61, 0.05), 2), lam: float = 0.5) -> Study:
    """Run every analysis of chapters/moe-multilingual/02_experiments.md on a trained `model` (one thread)."""
    if not isinstance(corpus, Corpus):
        raise ValueError(f"corpus must be a Corpus, got {type(corpus).__name__}")
    lex, E = corpus.lex, model.cfg.n_experts
    model.eval()
    with thread_limit(1):
        tokens, masks = corpus.parallel_sentences(n_sentences, seed=50_000 + seed)
        div, div_raw, cka, div_items = routing_views(model, tokens, masks, items=True)
        trained = corpus.trained
        others = [l for l in trained if l != 0]
        # expert shifts: base = English sentences; task = English question rows; languages = their sentences
        chosen = [model(tokens[l]).experts for l in [0] + others]
        fractions = [expert_fractions(ch, masks[l], E) for ch, l in zip(chosen, [0] + others)]
        tt, tm = corpus.task_text(0, n_task_rows, seed=60_000 + seed)
        task_chosen = model(tt).experts
        task_shift = expert_shift(expert_fractions(task_chosen, tm, E), fractions[0])
        counts = {"sentences": [expert_counts(ch, masks[l], E) for ch, l in zip(chosen, [0] + others)],
                  "task": expert_counts(task_chosen, tm, E)}
        language_shift = np.stack([expert_shift(f, fractions[0]) for f in fractions[1:]])
        overlap = overlap_by_tau(task_shift, language_shift, taus)
        windows = layer_windows(model.cfg.n_layers)
        plans = steering_plans(task_shift, language_shift, others, windows, lex.n_languages, E, seed=seed)
        correct = {}
        prompts = [corpus.task_prompts(l, n_questions, seed=70_000 + seed) for l in range(lex.n_languages)]
        for name, _, _, mode in CONDITIONS:
            rows = []
            for l in range(lex.n_languages):
                with steered(model, plans[name][l], mode or "soft", lam, seed=seed):
                    rows.append(task_correct(model, *prompts[l], lex.noun[l][:, 0]))
            correct[name] = np.stack(rows)
    return Study(lex.names, div, div_raw, cka, correct["none"].mean(1), 1 / N_NOUNS, task_shift, language_shift,
                 np.asarray(taus), overlap, plans, correct, windows, trained,
                 extra={"div_items": div_items, "expert_counts": counts})



def observables(study: Study, seed: int = 0) -> dict:
    """The numbers the chapter's claims test, for one model (chapters/moe-multilingual/02_experiments.md).

    `u_ratio`: the largest, over trained non-English languages, of mean middle-third divergence / min(first, last
    layer); `r`: Pearson r of accuracy and middle divergence over the non-English languages (unseen included);
    `unseen_gap`: the unseen language's middle divergence minus the largest other; `unseen_above_chance`;
    `overlap_03`: task-and-language experts at tau = 0.3; `d_<condition>`: mean change in non-English accuracy.
    """
    from scipy import stats

    d, mid = study.div, study.windows["middle"]
    others = study.others
    unseen = [l for l in range(len(study.names)) if l not in study.trained]
    langs = others + unseen
    mdiv, acc = study.middle_div, study.accuracy
    out = {"u_ratio": float(max(d[l, mid].mean() / min(d[l, 0], d[l, -1]) for l in others)),
           "r": float(stats.pearsonr(mdiv[langs], acc[langs])[0]) if np.ptp(acc[langs]) > 0 else float("nan"),
           "r_trained": float(stats.pearsonr(mdiv[others], acc[others])[0]) if np.ptp(acc[others]) > 0
           else float("nan"),
           "unseen_gap": float(mdiv[unseen].min() - mdiv[others].max()) if unseen else float("nan"),
           "unseen_above_chance": float(acc[unseen].max() - study.chance) if unseen else float("nan"),
           "overlap_03": float(study.overlap[int(np.argmin(np.abs(study.taus - 0.3))), 2])}
    for name, *_ in CONDITIONS[1:]:
        out[f"d_{name}"] = float(study.delta(name).mean())
    return out


def item_replicates(study: Study, n_resamples: int = 2000, seed: int = 0, tau: float = 0.3) -> dict:
    """Bootstrap replicates of two of `observables` for one model, resampling its items: `unseen_gap` over the
    parallel sentences, and `overlap_03` (task-and-language experts at `tau`) over the same sentences (English and
    each language together, since they are parallel) and, independently, the English question rows of the task
    shift. Each value is an array of `n_resamples`. Explained in chapters/moe-multilingual/02_experiments.md.
    """
    B = check_int("n_resamples", n_resamples)
    if "div_items" not in study.extra or "expert_counts" not in study.extra:
        raise ValueError("the study has no per-item values; make it with `analyse`")
    rng = np.random.default_rng(seed)
    items = study.extra["div_items"][:, study.windows["middle"]].mean(1)          # (languages, sentences)
    n = items.shape[1]
    draws = rng.multinomial(n, np.full(n, 1 / n), size=B).astype(float)          # (B, n): times each is drawn
    means = draws @ items.T / n                                                    # (B, languages)
    others = study.others
    unseen = [l for l in range(len(study.names)) if l not in study.trained]
    out = {"unseen_gap": means[:, unseen].min(1) - means[:, others].max(1) if unseen else np.full(B, np.nan)}

    def fractions(w, hits, tokens):
        return (w @ hits.reshape(len(tokens), -1)) / (w @ tokens)[:, None]        # (B, layers * E)

    sentences = study.extra["expert_counts"]["sentences"]
    task_hits, task_tokens = study.extra["expert_counts"]["task"]
    m = len(task_tokens)
    task_draws = rng.multinomial(m, np.full(m, 1 / m), size=B).astype(float)
    base = fractions(draws, *sentences[0])
    task = fractions(task_draws, task_hits, task_tokens) - base
    language = np.max([fractions(draws, *c) - base for c in sentences[1:]], axis=0)
    out["overlap_03"] = ((task > tau) & (language > tau)).sum(1).astype(float)
    return out


def seed_item_interval(replicates, seed: int = 0, confidence: float = 0.95) -> tuple[float, float]:
    """The percentile interval of a mean over seeds from each seed's bootstrap replicates over its items (a list of
    equal-length arrays, one per seed, from `item_replicates`): each resample draws the seeds with replacement and,
    for each seed drawn, one of its replicates at random, a two-stage bootstrap (seeds, then items). With one seed it
    is that seed's bootstrap over items. Explained in chapters/moe-multilingual/02_experiments.md.
    """
    R = np.stack([np.asarray(r, float) for r in replicates])                       # (seeds, B)
    if R.ndim != 2 or R.shape[1] < 2:
        raise ValueError(f"replicates must be one array of at least 2 replicates per seed, got shape {R.shape}")
    S, B = R.shape
    rng = np.random.default_rng(seed)
    if S == 1:
        means = R[0]
    else:
        which = rng.integers(S, size=(B, S))
        means = R[which, rng.integers(B, size=which.shape)].mean(1)
    if np.isnan(means).any():
        return float("nan"), float("nan")
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(means, [alpha, 1 - alpha])
    return float(lo), float(hi)
