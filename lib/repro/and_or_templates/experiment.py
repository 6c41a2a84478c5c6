"""The chapter's experiment, end to end: object templates, scene templates per theme, scoring against baselines,
prescriptions, structural expansion and the biclustering peers.

Explained in chapters/and-or-templates/02_experiments.md. `learn_world` fits the filters, the object templates and
the scene reference; `theme_study` learns and tests one theme's template; `expansion_study` grows the thirds
template from an unlabeled pool.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from scipy.stats import spearmanr
from sklearn.metrics import roc_auc_score

from ..common import check_int, stopwatch
from .canvas import (CELL, OBJECTS, TERMINALS, THEMES, THEME_NAMES, Item, cell_centre,
                     object_scenes, perturb, random_layout, render_all, sample_good, true_terminals)
from .features import FilterBank, object_features, raw_filters, scene_features
from .pursuit import Template, block_pursuit, evidence, expand, group_or_slots, parse, prescription

#: Settings fixed on development seed 100 (chapters/and-or-templates/02_experiments.md).
SETTINGS = dict(gamma_object=0.5, gamma_scene=1.5, min_share=0.1, prior=2.0, sigma=4.0, consistency=0.5)


@dataclass
class World:
    """What every theme shares: the filter bank, the three object templates and the scene reference sample R_q
    (chapters/and-or-templates/02_experiments.md)."""

    bank: FilterBank
    objects: list
    ref: np.ndarray
    object_data: tuple = ()

    def features(self, scenes) -> np.ndarray:
        """Scene-terminal responses (N, 161) of a list of scenes."""
        return self.image_features(render_all(scenes))

    def image_features(self, images) -> np.ndarray:
        """Scene-terminal responses (N, 161) of rendered images (N, SIZE, SIZE), for callers that keep the images."""
        return scene_features(images, self.bank, self.objects, sigma=SETTINGS["sigma"], prior=SETTINGS["prior"])

    def n_object_parameters(self) -> int:
        """Three numbers per object terminal (its offset and filter, beta, log z)."""
        return 3 * sum(len(t.cols) for t in self.objects)


def learn_world(rng, n_per_class: int = 60, n_object_ref: int = 200, n_scene_ref: int = 300) -> World:
    """Fit the filters' scales, learn one object template per class by block pursuit on its labelled crops against
    the crops of everything else, and draw the scene reference from random layouts
    (chapters/and-or-templates/02_experiments.md)."""
    scenes, centres, labels = object_scenes(rng, check_int("n_per_class", n_per_class), n_object_ref)
    raw = raw_filters(render_all(scenes))                 # computed once: the filters' scales and the crops share it
    bank = FilterBank.fit_raw(raw)
    F = object_features(bank.pooled_raw(raw), centres)
    objects = []
    for k in range(len(OBJECTS)):
        blocks = block_pursuit(F[labels == k], F[labels != k], gamma=SETTINGS["gamma_object"], min_rows=5,
                               max_blocks=1, conflict=lambda a, b: False)
        if not blocks:
            raise RuntimeError(f"no object template found for {OBJECTS[k]}: more crops are needed")
        objects.append(blocks[0])
    world = World(bank, objects, np.zeros((0, len(TERMINALS))), (F, labels))
    world.ref = world.features([random_layout(rng) for _ in range(check_int("n_scene_ref", n_scene_ref))])
    return world


def learn_template(world: World, R_good) -> Template:
    """Block pursuit on the good images' responses, then OR grouping of the blocks
    (chapters/and-or-templates/02_experiments.md)."""
    min_rows = max(5, int(np.ceil(SETTINGS["min_share"] * len(R_good))))
    blocks = block_pursuit(R_good, world.ref, gamma=SETTINGS["gamma_scene"], min_rows=min_rows)
    return group_or_slots(blocks)


def recovery(template: Template, theme: str) -> tuple[float, float]:
    """(precision, recall) of the learned terminals against the true ones of `theme`
    (chapters/and-or-templates/02_experiments.md)."""
    learned, true = template.terminals(), true_terminals(theme)
    return (len(learned & true) / len(learned) if learned else 0.0), len(learned & true) / len(true)


def pooled_precision(recovery_runs: list, seed: int = 0) -> tuple[float, float, float, int, int]:
    """(precision, low, high, learned, false): the share of true terminals among every terminal learned by every
    template of `recovery_runs` (one list of ThemeResult per seed, in THEME_NAMES order), with a 95% interval from a
    two-stage bootstrap (templates, then their terminals), the number of learned terminals and of false ones
    (chapters/and-or-templates/02_experiments.md)."""
    from ..common import cluster_bootstrap_ci

    hits, owner = [], []
    for r, themes in enumerate(recovery_runs):
        for i, (res, theme) in enumerate(zip(themes, THEME_NAMES)):
            learned, true = sorted(res.template.terminals()), true_terminals(theme)
            hits += [float(j in true) for j in learned]
            owner += [r * len(THEME_NAMES) + i] * len(learned)
    prec, lo, hi = cluster_bootstrap_ci(hits, owner, seed=check_int("seed", seed, low=0))
    return prec, lo, hi, len(hits), int(len(hits) - sum(hits))


def branch_map(template: Template, theme: str, slot: int) -> dict:
    """{(learned slot, learned branch): true branch} for learned branches whose terminals equal a true branch of
    the true slot `slot` (chapters/and-or-templates/02_experiments.md)."""
    true = THEMES[theme][slot]
    return {(s, b): true.index(frozenset(int(j) for j in blk.cols))
            for s, sl in enumerate(template.slots) for b, blk in enumerate(sl)
            if frozenset(int(j) for j in blk.cols) in true}


def slot_of(theme: str, j: int) -> int:
    """The true slot of `theme` that terminal j belongs to, -1 if none (chapters/and-or-templates/02_experiments.md)."""
    for s, slot in enumerate(THEMES[theme]):
        if any(j in branch for branch in slot):
            return s
    return -1


def _threshold(scores, y) -> float:
    """The cut between good and bad that is most accurate on the training scores."""
    cuts = np.unique(scores)
    acc = [np.mean((scores >= c) == y) for c in cuts]
    return float(cuts[int(np.argmax(acc))])


def move_item(scene, j: int, keep: set):
    """Apply a prescription "put terminal j's part in its cell": the item of j's kind nearest to the cell that does
    not already explain one of the positive terminals `keep` moves to the cell's centre; if there is none, one is
    added (chapters/and-or-templates/02_experiments.md)."""
    kind, cy, cx = TERMINALS[j]
    ty = cell_centre(cy) if cy >= 0 else -1
    tx = cell_centre(cx) if cx >= 0 else -1

    def cell_of(it):
        key = (it.kind, int(it.y // CELL) if it.y >= 0 else -1, int(it.x // CELL) if it.x >= 0 else -1)
        return TERMINALS.index(key) if key in TERMINALS else -1

    candidates = [i for i, it in enumerate(scene.items) if it.kind == kind and cell_of(it) not in keep]
    items = list(scene.items)
    if candidates:
        dist = [abs(items[i].y - ty) * (ty >= 0) + abs(items[i].x - tx) * (tx >= 0) for i in candidates]
        i = candidates[int(np.argmin(dist))]
        items[i] = replace(items[i], y=float(ty), x=float(tx))
    else:
        items.append(Item(kind, float(ty), float(tx)))
    return replace(scene, items=items)


@dataclass
class ThemeResult:
    """Everything measured on one theme (chapters/and-or-templates/02_experiments.md)."""

    theme: str
    template: Template
    precision: float
    recall: float
    scores: dict = field(default_factory=dict)          # method -> test scores
    y_test: np.ndarray = None
    ratings: np.ndarray = None
    accuracy: dict = field(default_factory=dict)
    named: float = float("nan")
    raised: float = float("nan")
    presc_examples: list = field(default_factory=list)
    branch_accuracy: float = float("nan")
    n_true_branches: int = 0
    test_scenes: list = field(default_factory=list)
    R_test: np.ndarray = None
    R_train: np.ndarray = None
    train_scenes: list = field(default_factory=list)
    train_images: np.ndarray = None                     # render_all(train_scenes), kept for the baselines
    test_images: np.ndarray = None                      # render_all(test_scenes)


def theme_data(theme: str, rng, n_train: int, n_test: int, n_presc: int) -> dict:
    """Scenes of one theme: good and bad for training and testing, and single-move perturbations for the
    prescription test (chapters/and-or-templates/02_experiments.md)."""
    good = lambda n: [sample_good(theme, rng) for _ in range(n)]
    train_bad = [perturb(s, rng) for s in good(n_train)]
    test_bad = [perturb(s, rng) for s in good(n_test)]
    presc = [perturb(s, rng, n=1, kinds=("move",)) for s in good(n_presc)]
    return dict(train_good=good(n_train), train_bad=train_bad, test_good=good(n_test), test_bad=test_bad, presc=presc)


def theme_study(world: World, theme: str, data: dict) -> ThemeResult:
    """Learn the theme's template from its good training images, score the test images, test prescriptions
    (chapters/and-or-templates/02_experiments.md)."""
    train = data["train_good"] + data["train_bad"]
    test = data["test_good"] + data["test_bad"]
    n_good = len(data["train_good"])
    train_images, test_images = render_all(train), render_all(test)     # rendered once, kept for the baselines
    R_tg = world.image_features(train_images[:n_good])
    template = learn_template(world, R_tg)
    P, Rc = recovery(template, theme)
    R_train = np.concatenate([R_tg, world.image_features(train_images[n_good:])])
    R_test = world.image_features(test_images)
    y_train = np.array([s.good for s in train])
    y_test = np.array([s.good for s in test])
    s_train, s_test = parse(template, R_train).score, parse(template, R_test).score
    res = ThemeResult(theme, template, P, Rc, {"template": s_test}, y_test, np.array([s.rating for s in test]))
    res.accuracy["template"] = float(np.mean((s_test >= _threshold(s_train, y_train)) == y_test))
    res.test_scenes, res.R_test, res.R_train, res.train_scenes = test, R_test, R_train, train
    res.train_images, res.test_images = train_images, test_images
    # prescriptions on single-object moves
    R_p = world.features(data["presc"])
    named, moved, examples = [], [], []
    for scene, r in zip(data["presc"], R_p):
        j, t = prescription(template, r)
        named.append(slot_of(theme, j) == slot_of(theme, scene.perturbations[0][1]))
        keep = {k for (_, _, k, v) in evidence(template, r) if v > 0}
        moved.append(move_item(scene, j, keep))
        examples.append((scene, j, t))
    after = parse(template, world.features(moved)).score
    before = parse(template, R_p).score
    res.named, res.raised = float(np.mean(named)), float(np.mean(after > before))
    res.presc_examples = [(s, j, t, m, b, a) for (s, j, t), m, b, a in zip(examples, moved, before, after)]
    if theme == "thirds":                     # held-out accuracy of the parse on the subject slot (true slot 0)
        bmap = branch_map(template, theme, 0)
        res.n_true_branches = len(set(bmap.values()))
        good_idx = np.flatnonzero(y_test)
        p = parse(template, R_test[good_idx])
        hits = []
        for n, i in enumerate(good_idx):
            chosen = [bmap.get((s, int(p.branch[n, s]))) for s in range(len(template.slots))]
            hits.append(test[i].branches[0] in chosen)
        res.branch_accuracy = float(np.mean(hits))
    return res


def baseline_study(results: list, seed: int, cnn_steps: int) -> dict:
    """Train logistic regression on pixels (one per theme) and the conditional CNN (all themes together) on the same
    training images, score the same test images; adds "logreg" and "cnn" to each theme's scores and accuracies and
    returns their parameter counts and fit seconds (chapters/and-or-templates/02_experiments.md)."""
    from .baselines import cnn_scores, n_parameters, pixel_logreg, train_cnn
    info = dict(logreg_seconds=0.0)
    images = {r.theme: (render_all(r.train_scenes) if r.train_images is None else r.train_images,
                        render_all(r.test_scenes) if r.test_images is None else r.test_images) for r in results}
    for r in results:
        X_tr, X_te = images[r.theme]
        y_tr = np.array([s.good for s in r.train_scenes])
        scores, info["logreg_parameters"], sec = pixel_logreg(X_tr, y_tr, X_te)
        info["logreg_seconds"] += sec
        r.scores["logreg"] = scores
        r.accuracy["logreg"] = float(np.mean((scores > 0) == r.y_test))
    X = np.concatenate([images[r.theme][0] for r in results])
    th = np.concatenate([np.full(len(r.train_scenes), k) for k, r in enumerate(results)])
    y = np.concatenate([[s.good for s in r.train_scenes] for r in results]).astype(float)
    model, info["cnn_seconds"] = train_cnn(X, th, y, len(results), steps=cnn_steps, seed=seed)
    info["cnn_parameters"] = n_parameters(model)
    for k, r in enumerate(results):
        r.scores["cnn"] = cnn_scores(model, images[r.theme][1], np.full(len(r.test_scenes), k), len(results))
        r.accuracy["cnn"] = float(np.mean((r.scores["cnn"] > 0) == r.y_test))
    return info


def summary_metrics(results: list, y_key: str = "template") -> dict:
    """Mean over themes of AUC, Spearman with the rating and accuracy for one scoring method
    (chapters/and-or-templates/02_experiments.md)."""
    auc = [roc_auc_score(r.y_test, r.scores[y_key]) for r in results]
    rho = [spearmanr(r.scores[y_key], r.ratings).statistic for r in results]
    acc = [r.accuracy[y_key] for r in results]
    return dict(auc=float(np.mean(auc)), spearman=float(np.mean(rho)), accuracy=float(np.mean(acc)),
                auc_per_theme=auc, spearman_per_theme=rho, accuracy_per_theme=acc)


def _row_spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row of x with the same row of y (mid-ranks for ties), for (B, N) arrays."""
    from scipy.stats import rankdata

    rx, ry = rankdata(x, axis=1), rankdata(y, axis=1)
    rx -= rx.mean(1, keepdims=True)
    ry -= ry.mean(1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(1) / np.sqrt((rx ** 2).sum(1) * (ry ** 2).sum(1))


def _resampled_ranks(x: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(B, N) mid-ranks of the N values x within each of B resamples, resample b holding item i counts[b, i] times
    (what `rankdata` gives on the resample, read back per item; items not drawn get a rank that is never used)."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])            # groups of equal values
    group = np.cumsum(np.r_[True, xs[1:] != xs[:-1]]) - 1
    g = np.add.reduceat(counts[:, order], starts, axis=1)                 # (B, groups) drawn per value
    mid = np.cumsum(g, 1) - g + (g + 1) / 2
    ranks = np.empty_like(counts, dtype=float)
    ranks[:, order] = mid[:, group]
    return ranks


def _resampled_spearman(x: np.ndarray, y: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(B,) Spearman's rho of x with y on each of B resamples given by item counts (B, N), as `_row_spearman` on
    the resampled arrays would give, in O(B N) time."""
    rx, ry, w = _resampled_ranks(x, counts), _resampled_ranks(y, counts), counts / counts.sum(1, keepdims=True)
    rx = rx - (w * rx).sum(1, keepdims=True)
    ry = ry - (w * ry).sum(1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (w * rx * ry).sum(1) / np.sqrt((w * rx ** 2).sum(1) * (w * ry ** 2).sum(1))


def spearman_gap_ci(studies: list, a: str = "template", b: str = "cnn", n_resamples: int = 2000, seed: int = 0,
                    confidence: float = 0.95) -> tuple[float, float, float]:
    """(gap, low, high): the worst seed's difference of Spearman's rho with the rating, method `a` minus `b`, each
    the mean over themes (as in `summary_metrics`), with a percentile interval of that same worst-seed value from a
    paired bootstrap: each resample draws the test images of every theme and seed with replacement and scores both
    methods on the same draw (chapters/and-or-templates/02_experiments.md)."""
    n_resamples = check_int("n_resamples", n_resamples, low=2)
    rng = np.random.default_rng(check_int("seed", seed, low=0))
    point, boot = [], []
    for st in studies:
        point.append(summary_metrics(st.themes, a)["spearman"] - summary_metrics(st.themes, b)["spearman"])
        per_theme = []
        for r in st.themes:
            rating = np.asarray(r.ratings, float)
            n = len(rating)
            idx = rng.integers(n, size=(n_resamples, n)) + n * np.arange(n_resamples)[:, None]
            counts = np.bincount(idx.ravel(), minlength=n_resamples * n).reshape(n_resamples, n).astype(float)
            per_theme.append(_resampled_spearman(np.asarray(r.scores[a], float), rating, counts)
                             - _resampled_spearman(np.asarray(r.scores[b], float), rating, counts))
        boot.append(np.mean(per_theme, 0))
    alpha = (1 - confidence) / 2
    lo, hi = np.nanquantile(np.min(boot, 0), [alpha, 1 - alpha])
    return float(np.min(point)), float(lo), float(hi)


# ------------------------------------------------------------------------------------------------ expansion

@dataclass
class ExpansionResult:
    """Structural expansion of the thirds template from two subject branches (chapters/and-or-templates/02_experiments.md)."""

    start: Template
    pool_sizes: list
    recovered: list
    spurious: list
    distractor_spurious: int
    grown: Template


def expansion_study(world: World, rng, n_labeled: int, pool_sizes, n_distractor: int) -> ExpansionResult:
    """Learn thirds from images using only subject branches 0 and 1 (persons at (2,2) and (2,4)), then grow it on
    unlabeled pools of increasing size: half thirds images of every branch, half off-theme distractors (other
    themes and random layouts). Counts the missing true branches recovered and the branches that are not true; a
    separate pool of distractors only tests that nothing grows from them (chapters/and-or-templates/02_experiments.md)."""
    labeled = [sample_good("thirds", rng, branches=[[0, 1], None]) for _ in range(check_int("n_labeled", n_labeled))]
    start = learn_template(world, world.features(labeled))
    pool_sizes = sorted(int(n) for n in pool_sizes)
    others = [t for t in THEME_NAMES if t != "thirds"]

    def distractor():
        return random_layout(rng) if rng.random() < 0.5 else sample_good(str(rng.choice(others)), rng)

    pool = [sample_good("thirds", rng) if i % 2 == 0 else distractor() for i in range(max(pool_sizes))]
    R_pool = world.features(pool) if pool else np.zeros((0, len(TERMINALS)))
    missing = {frozenset(b) for b in THEMES["thirds"][0][2:]}
    recovered, spurious, grown = [], [], start
    for n in pool_sizes:
        if n == 0:
            recovered.append(0)
            spurious.append(0)
            continue
        grown, added = expand(start, R_pool[:n], world.ref, gamma=SETTINGS["gamma_scene"],
                              min_rows=max(5, int(np.ceil(SETTINGS["min_share"] * n / 4))),
                              consistency=SETTINGS["consistency"])
        sets = [frozenset(int(j) for j in b.cols) for _, b in added]
        recovered.append(len(missing & set(sets)))
        spurious.append(sum(s not in missing for s in sets))
    R_d = world.features([distractor() for _ in range(check_int("n_distractor", n_distractor))])
    _, added_d = expand(start, R_d, world.ref, gamma=SETTINGS["gamma_scene"],
                        min_rows=max(5, int(np.ceil(SETTINGS["min_share"] * len(R_d) / 4))),
                        consistency=SETTINGS["consistency"])
    return ExpansionResult(start, pool_sizes, recovered, spurious, len(added_d), grown)


def expansion_runs(world: World, rng, n_runs: int, n_labeled: int, pool_size: int, n_distractor: int) -> np.ndarray:
    """(n_runs, 2) array of (missing branches recovered, branches added that are not true) in independent expansion
    runs: each learns the start template from fresh labelled images, grows it once on a fresh unlabeled pool of
    `pool_size` images and once on a fresh pool of `n_distractor` distractors, and counts the branches that are not
    true from both (chapters/and-or-templates/02_experiments.md)."""
    out = []
    for _ in range(check_int("n_runs", n_runs)):
        e = expansion_study(world, rng, n_labeled, (check_int("pool_size", pool_size),), n_distractor)
        out.append((e.recovered[-1], e.spurious[-1] + e.distractor_spurious))
    return np.array(out, dtype=int).reshape(-1, 2)


def poisson_rate_ci(counts, confidence: float = 0.95) -> tuple[float, float, float]:
    """(rate, low, high): the mean of event counts per run, with the exact (Garwood) interval of a Poisson rate from
    their total; unlike a bootstrap it does not shrink to a point when every run counts 0
    (chapters/and-or-templates/02_experiments.md)."""
    from scipy.stats import chi2

    x = np.asarray(counts, dtype=float)
    if x.ndim != 1 or len(x) == 0 or np.any(x < 0) or np.any(x != np.round(x)):
        raise ValueError(f"counts must be a non-empty 1-D array of non-negative integers, got {counts!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    total, n, alpha = x.sum(), len(x), 1 - confidence
    low = chi2.ppf(alpha / 2, 2 * total) / 2 / n if total > 0 else 0.0
    high = chi2.ppf(1 - alpha / 2, 2 * total + 2) / 2 / n
    return float(total / n), float(low), float(high)


@dataclass
class Study:
    """One seed of the chapter's experiment (chapters/and-or-templates/02_experiments.md)."""

    seed: int
    world: World
    themes: list
    baselines: dict
    expansion: ExpansionResult
    seconds: dict


#: Sizes of the experiment at each scale (chapters/and-or-templates/02_experiments.md). The CNN's 400 steps at ci lie
#: on the plateau of its held-out AUC on development seed 100 (data/and-or-templates/cnn-convergence.json).
SIZES = dict(ci=dict(n_per_class=60, n_object_ref=200, n_scene_ref=300, n_train=60, n_test=60, n_presc=30,
                     cnn_steps=400, n_labeled=60, pool_sizes=(0, 20, 40, 80, 160), n_distractor=80, expansion_runs=12),
             full=dict(n_per_class=120, n_object_ref=400, n_scene_ref=600, n_train=200, n_test=200, n_presc=60,
                       cnn_steps=3000, n_labeled=150, pool_sizes=(0, 20, 40, 80, 160, 320, 640), n_distractor=320,
                       expansion_runs=6))


def template_study(seed: int, scale: str = "ci") -> tuple[World, list, dict, np.random.Generator]:
    """The template stage of one seed: world and five themes, with no baselines or expansion. Returns (world,
    theme results, seconds by stage, the generator for what follows) (chapters/and-or-templates/02_experiments.md)."""
    if scale not in SIZES:
        raise ValueError(f"scale={scale!r} is not a scale of this chapter; use one of {', '.join(map(repr, SIZES))}")
    z = SIZES[scale]
    rng = np.random.default_rng(check_int("seed", seed, low=0))
    seconds = {}
    with stopwatch() as watch:
        world = learn_world(rng, z["n_per_class"], z["n_object_ref"], z["n_scene_ref"])
    seconds["world"] = watch.seconds
    with stopwatch() as watch:
        themes = [theme_study(world, t, theme_data(t, rng, z["n_train"], z["n_test"], z["n_presc"]))
                  for t in THEME_NAMES]
    seconds["templates"] = watch.seconds
    return world, themes, seconds, rng


def run_study(seed: int, scale: str = "ci") -> Study:
    """The whole experiment for one seed at `scale` ("ci" or "full"): world, five themes, baselines, expansion
    (chapters/and-or-templates/02_experiments.md)."""
    world, themes, seconds, rng = template_study(seed, scale)
    z = SIZES[scale]
    with stopwatch() as watch:
        baselines = baseline_study(themes, seed, z["cnn_steps"])
    seconds["baselines"] = watch.seconds
    with stopwatch() as watch:
        expansion = expansion_study(world, rng, z["n_labeled"], z["pool_sizes"], z["n_distractor"])
    seconds["expansion"] = watch.seconds
    return Study(seed, world, themes, baselines, expansion, seconds)


__all__ = ["Study", "SIZES", "run_study", "template_study", "SETTINGS", "World", "learn_world", "learn_template", "recovery", "branch_map", "move_item",
           "ThemeResult", "theme_data", "slot_of", "baseline_study", "theme_study", "summary_metrics", "ExpansionResult", "expansion_study",
           "spearman_gap_ci", "expansion_runs", "poisson_rate_ci", "pooled_precision"]
