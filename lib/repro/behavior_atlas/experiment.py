"""The chapter's experiment for one seed: multi-task against single-task and flat-head models, the negative control,
scikit-learn peers, transfer to the held-out sarcasm set, the descriptor adapter and linear probes of the latents.

Explained in chapters/behavior-atlas/02_experiments.md. Everything for one seed is one call, `run_study(seed, scale)`;
the models of a stage train together, stacked (see `repro.behavior_atlas.model`).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import r2_score
from sklearn.neural_network import MLPClassifier

from repro.common import check_choice, check_int, stopwatch

from .generator import TRAIN_SETS, make_atlas
from .metrics import f1
from .model import Pool, features, init_params, make_pool, predict, train, train_probes

#: Sizes and settings at each scale (fixed on development seeds 100 and 101).
SIZES = {
    "ci": {"replicates": 2, "steps": 600, "n_test": 500, "scale_train": 1.0, "probe_steps": 300,
           "adapter_steps": 600, "transfer_n": (25, 50, 100, 200, 400)},
    "full": {"replicates": 5, "steps": 1500, "n_test": 1500, "scale_train": 2.0, "probe_steps": 500,
             "adapter_steps": 600, "transfer_n": (25, 50, 100, 200, 400)},
}
SETTINGS = {"hidden": 32, "temperature": 0.5, "lr": 3e-3, "batch": 128, "weight_decay": 1e-4}


@dataclass
class Study:
    """Everything `run_study` measured for one seed (chapters/behavior-atlas/02_experiments.md)."""

    seed: int
    scale: str
    f1: dict                 # {variant: {dataset: [weighted F1 per replicate]}}
    macro: dict              # {variant: {dataset: [macro F1 per replicate]}}
    control: dict            # {"multi"|"single": [dep-c weighted F1 per replicate]}, independent latents
    peers: dict              # {peer: dep-c weighted F1}
    transfer: dict           # {source: {n labels: [weighted F1 per replicate]}}
    adapter_gain: dict       # {dataset: [gain per replicate]}
    r2: dict                 # {trunk: {latent: [R^2 per replicate]}}
    n_params: dict
    seconds: dict = field(default_factory=dict)

    def mean(self, table: str, variant: str, key) -> float:
        """Mean over replicates of one entry (chapters/behavior-atlas/02_experiments.md)."""
        return float(np.mean(getattr(self, table)[variant][key]))


def subset(pool: Pool, idx) -> Pool:
    """The clips `idx` of a pool, sampled uniformly (chapters/behavior-atlas/02_experiments.md)."""
    idx = torch.as_tensor(np.asarray(idx), dtype=torch.long)
    if idx.numel() == 0:
        raise ValueError("idx must select at least one clip")
    fields = {k: getattr(pool, k)[idx] for k in ("x", "mask", "desc", "dmask", "y", "valid")}
    return Pool(**fields, weight=torch.full((len(idx),), 1.0 / len(idx)))


def _scores(params, pools_test: dict, rows: dict, adapter: bool = False):
    """{variant: {dataset: [F1 per replicate]}} for weighted and macro F1."""
    w, m = {}, {}
    for name, (pool, variants) in pools_test.items():
        pred = predict(params, pool, adapter=adapter)
        y = pool.y.numpy()
        for variant, models in variants.items():
            w.setdefault(variant, {})[name] = [f1(y, pred[i]) for i in models]
            m.setdefault(variant, {})[name] = [f1(y, pred[i], "macro") for i in models]
    return w, m


def _flat(pool: Pool) -> np.ndarray:
    return torch.cat([pool.x.flatten(1), pool.mask], 1).numpy()


def run_study(seed: int, scale: str = "ci") -> Study:
    """Run every stage for one seed at `scale` (chapters/behavior-atlas/02_experiments.md)."""
    seed = check_int("seed", seed, low=0)
    check_choice("scale", scale, tuple(SIZES))
    z, seconds = SIZES[scale], {}
    with stopwatch() as watch:
        atlas = make_atlas(seed, shared=True, n_test=z["n_test"], scale_train=z["scale_train"])
        ctrl = make_atlas(seed, shared=False, n_test=z["n_test"], scale_train=z["scale_train"])
    seconds["data"] = watch.seconds
    stages = {}
    for name, stage in (("multi/single", _stage_multi_single), ("peers", _stage_peers), ("transfer", _stage_transfer),
                        ("adapter", _stage_adapter), ("probes", _stage_probes)):
        with stopwatch() as watch:
            stages.update(stage(atlas, ctrl, z, seed, stages))
        seconds[name] = watch.seconds
    from .model import n_parameters
    params = stages["params"]
    n_params = {"per model": n_parameters(params), "adapter": n_parameters(params, ("A1", "a1", "A2", "a2", "alpha"))}
    return Study(seed=seed, scale=scale, f1=stages["w"], macro=stages["m"], control=stages["control"],
                 peers=stages["peers"], transfer=stages["transfer"], adapter_gain=stages["gains"], r2=stages["r2"],
                 n_params=n_params, seconds=seconds)


def _layout(replicates: int) -> list[tuple[str, int]]:
    """The stacked models of stage 1, as (variant, replicate): multi-task, flat head, single-task (x 8), and the
    control's multi- and single-task."""
    R = range(replicates)
    return [("multi", r) for r in R] + [("flat", r) for r in R] + \
        [(f"single:{d}", r) for d in TRAIN_SETS for r in R] + \
        [("ctrl-multi", r) for r in R] + [("ctrl-single", r) for r in R]


def _pool_for(variant: str, atlas, ctrl):
    """The training pool of one stage-1 model."""
    S = SETTINGS
    if variant in ("multi", "flat"):
        return make_pool(atlas, TRAIN_SETS, head="flat" if variant == "flat" else "per-dataset",
                         temperature=S["temperature"])
    if variant.startswith("single:"):
        return make_pool(atlas, [variant.split(":")[1]])
    if variant == "ctrl-multi":
        return make_pool(ctrl, TRAIN_SETS, temperature=S["temperature"])
    return make_pool(ctrl, ["dep-c"])


def _stage_multi_single(atlas, ctrl, z, seed, done) -> dict:
    """Stage 1: train the stacked multi-task, flat-head, single-task and control models; their test F1s."""
    S, layout = SETTINGS, _layout(z["replicates"])
    pools = [_pool_for(v, atlas, ctrl) for v, _ in layout]
    params = init_params(len(layout), hidden=S["hidden"], seed=seed)
    train(params, pools, z["steps"], lr=S["lr"], batch=S["batch"], weight_decay=S["weight_decay"], seed=seed)
    rows = lambda v: [i for i, (name, _) in enumerate(layout) if name == v]
    tests = {d: (make_pool(atlas, [d], "test"), {"multi": rows("multi"), "single": rows(f"single:{d}")})
             for d in TRAIN_SETS}
    w, m = _scores(params, tests, rows)
    for d in TRAIN_SETS:
        fp = make_pool(atlas, [d], "test", head="flat")
        pred = predict(params, fp)
        w.setdefault("flat", {})[d] = [f1(fp.y.numpy(), pred[i]) for i in rows("flat")]
        m.setdefault("flat", {})[d] = [f1(fp.y.numpy(), pred[i], "macro") for i in rows("flat")]
    cp = make_pool(ctrl, ["dep-c"], "test")
    pred = predict(params, cp)
    control = {"multi": [f1(cp.y.numpy(), pred[i]) for i in rows("ctrl-multi")],
               "single": [f1(cp.y.numpy(), pred[i]) for i in rows("ctrl-single")]}
    return {"params": params, "rows": rows, "tests": tests, "w": w, "m": m, "control": control}


def _stage_peers(atlas, ctrl, z, seed, done) -> dict:
    """Peers: scikit-learn single-task baselines on the depression set."""
    dtr, dte = make_pool(atlas, ["dep-c"]), done["tests"]["dep-c"][0]
    peers = {}
    for name, est in (("LogisticRegression", LogisticRegression(max_iter=2000)),
                      ("MLPClassifier", MLPClassifier(hidden_layer_sizes=(32, 32), max_iter=800, alpha=1e-3,
                                                      random_state=seed))):
        est.fit(_flat(dtr), dtr.y.numpy())
        peers[name] = f1(dte.y.numpy(), est.predict(_flat(dte)))
    return {"peers": peers}


def _stage_transfer(atlas, ctrl, z, seed, done) -> dict:
    """Stage 2: probes on frozen trunks, and models from scratch, on few labels of the held-out sarcasm set."""
    S, R, params, rows = SETTINGS, z["replicates"], done["params"], done["rows"]
    sar_tr, sar_te = make_pool(atlas, ["sar-e"]), make_pool(atlas, ["sar-e"], "test")
    rng = np.random.default_rng([seed, 11])
    ytr, yte = atlas["sar-e"]["train"].y, atlas["sar-e"]["test"].y          # local labels 0 / 1
    subsets = {(n, r): rng.permutation(len(sar_tr))[:n] for n in z["transfer_n"] for r in range(R)}
    sources = {"multi-task trunk": rows("multi"), "single-task trunk (sen-c)": rows("single:sen-c"),
               "single-task trunk (hum-d)": rows("single:hum-d")}
    transfer = {}
    keys = list(subsets)
    for src, models in sources.items():
        ftr = {r: features(params, sar_tr, models[r]) for r in range(R)}
        fte = {r: features(params, sar_te, models[r]) for r in range(R)}
        probe = train_probes([ftr[r][subsets[(n, r)]] for n, r in keys], [ytr[subsets[k]] for k in keys],
                             2, z["probe_steps"], seed=seed)
        preds = probe([fte[r] for _, r in keys])
        transfer[src] = {}
        for (n, r), p in zip(keys, preds):
            transfer[src].setdefault(n, []).append(f1(yte, p))
    scratch = init_params(len(keys), hidden=S["hidden"], seed=seed + 1)
    train(scratch, [subset(sar_tr, subsets[k]) for k in keys], z["probe_steps"], lr=S["lr"], batch=64,
          weight_decay=S["weight_decay"], seed=seed)
    pred = predict(scratch, sar_te)
    transfer["scratch"] = {}
    for i, (n, r) in enumerate(keys):
        transfer["scratch"].setdefault(n, []).append(f1(sar_te.y.numpy(), pred[i]))
    return {"transfer": transfer}


def _stage_adapter(atlas, ctrl, z, seed, done) -> dict:
    """Stage 3: the BAM-style descriptor adapter on the frozen multi-task models, against heads retrained alone."""
    S, R, params, rows, tests = SETTINGS, z["replicates"], done["params"], done["rows"], done["tests"]
    base = {k: v[rows("multi")].clone() for k, v in params.items()}
    with_desc, heads_only = copy.deepcopy(base), copy.deepcopy(base)
    mix = make_pool(atlas, TRAIN_SETS, temperature=S["temperature"])
    train(with_desc, [mix] * R, z["adapter_steps"], trainable=("Wh", "bh", "A1", "a1", "A2", "a2", "alpha"),
          lr=S["lr"], batch=S["batch"], weight_decay=S["weight_decay"], adapter=True, seed=seed + 2)
    train(heads_only, [mix] * R, z["adapter_steps"], trainable=("Wh", "bh"), lr=S["lr"], batch=S["batch"],
          weight_decay=S["weight_decay"], seed=seed + 2)
    gains = {}
    for d in TRAIN_SETS:
        tp = tests[d][0]
        a, b = predict(with_desc, tp, adapter=True), predict(heads_only, tp)
        gains[d] = [f1(tp.y.numpy(), a[r]) - f1(tp.y.numpy(), b[r]) for r in range(R)]
    return {"gains": gains}


def _stage_probes(atlas, ctrl, z, seed, done) -> dict:
    """Stage 4: linear probes (ridge) of the true latents from each trunk, on clips with every modality."""
    params, rows, H = done["params"], done["rows"], SETTINGS["hidden"]
    probe_split = atlas["sen-c"]["test"]
    pp = make_pool(atlas, ["sen-c"], "test")
    half = len(pp) // 2
    r2 = {}
    trunks = {"multi-task": rows("multi"), **{f"single:{d}": rows(f"single:{d}") for d in TRAIN_SETS}}
    for name, models in trunks.items():
        r2[name] = {}
        for lat in ("v", "a", "d"):
            target = probe_split.latents[lat]
            vals = []
            for i in models:
                t = features(params, pp, i)[:, -H:]
                fit = Ridge(alpha=1.0).fit(t[:half], target[:half])
                vals.append(r2_score(target[half:], fit.predict(t[half:])))
            r2[name][lat] = vals
    return {"r2": r2}


def summary_metrics(studies: list) -> dict:
    """The claims' numbers, each the mean over the replicates of a study and, across studies, the worst one
    (chapters/behavior-atlas/02_experiments.md)."""
    if not studies:
        raise ValueError("studies must be a non-empty list of Study")
    per = []
    for s in studies:
        single_r2 = np.mean([np.mean(s.r2[f"single:{d}"]["v"]) for d in TRAIN_SETS])
        per.append({
            "dep_gain": s.mean("f1", "multi", "dep-c") - s.mean("f1", "single", "dep-c"),
            "ctrl_gain": float(np.mean(s.control["multi"]) - np.mean(s.control["single"])),
            "transfer_100": float(np.mean(s.transfer["multi-task trunk"][100]) - np.mean(s.transfer["scratch"][100])),
            "adapter_emo": float(np.mean(s.adapter_gain["emo-a"])),
            "adapter_hum": float(np.mean(s.adapter_gain["hum-d"])),
            "r2_gap": float(np.mean(s.r2["multi-task"]["v"]) - single_r2),
        })
    return per
