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
from .divergence import divergence_by_layer, sequence_routing
from .experts import expert_fractions, expert_shift, overlap_by_tau
from .steering import steered, task_correct

__all__ = ["Study", "layer_windows", "routing_views", "steering_plans", "analyse", "observables", "CONDITIONS"]

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
def routing_views(model, tokens, masks) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """On parallel sentences (languages, n, length) with content masks: the normalised divergence from English, the
    plain JSD and the linear CKA with English of the pooled hidden states, each (languages, layers).

    Explained in chapters/moe-multilingual/02_experiments.md.
    """
    model.eval()
    with thread_limit(1):
        routing, states = _routing_and_states(model, tokens, masks)
    cka = np.array([[linear_cka(states[0, j], states[l, j]) for j in range(states.shape[1])]
                    for l in range(len(states))])
    return divergence_by_layer(routing), divergence_by_layer(routing, normalized=False), cka


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
        div, div_raw, cka = routing_views(model, tokens, masks)
        trained = corpus.trained
        others = [l for l in trained if l != 0]
        # expert shifts: base = English sentences; task = English arithmetic text; languages = their sentences
        fractions = [expert_fractions(model(tokens[l]).experts, masks[l], E) for l in [0] + others]
        tt, tm = corpus.task_text(0, n_task_rows, seed=60_000 + seed)
        task_shift = expert_shift(expert_fractions(model(tt).experts, tm, E), fractions[0])
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
                 np.asarray(taus), overlap, plans, correct, windows, trained)



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
