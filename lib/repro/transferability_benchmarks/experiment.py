"""The chapter's experiment: pre-train a zoo, compute every score and the ground truth on every target, and
summarise with weighted tau and fidelity.

Explained in chapters/transferability-benchmarks/02_experiments.md.
"""
from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from repro.common import check_choice, check_int, stopwatch, thread_limit
from repro.nn import fit_classifier

from .images import TARGETS, task_copy
from .metrics import METRICS, knn_accuracy, probe_subset_accuracy
from .ranking import fidelity, static_history, static_size, tau_w
from .zoo import ZooModel, pretrain, zoo_a_specs, zoo_b_specs

__all__ = ["SIZES", "ZooResult", "run_zoo", "probe_accuracy", "finetune_accuracy", "tau_table", "fidelity_table",
           "ablation_taus", "PEERS"]

#: Sizes per scale: source images and pre-training steps per model, target train / test images, ground truth.
SIZES = {"ci": dict(n_source=3000, steps=80, batch=128, n_train=300, n_test=300, truth="probe", ft_epochs=0),
         "full": dict(n_source=6000, steps=200, batch=128, n_train=500, n_test=500, truth="finetune", ft_epochs=3)}
PEERS = ("kNN", "probe-20%")


@dataclass
class ZooResult:
    """Everything measured on one zoo at one seed: models, the accuracy matrix (models x targets), every metric's
    and peer's scores (models x targets), and wall times.

    Explained in chapters/transferability-benchmarks/02_experiments.md.
    """
    zoo: str
    seed: int
    models: list[ZooModel] = field(repr=False)
    targets: list[str]
    acc: np.ndarray
    scores: dict[str, np.ndarray]
    seconds: dict[str, float]

    @property
    def names(self) -> list[str]:
        return [m.name for m in self.models]


def _features(net, X, batch=1000, probs=True):
    """Features of ``X`` (float64 numpy) and, if ``probs``, the source softmax (else None), ``batch`` images at once.

    ``net(x)`` is ``net.head(net.features(x))``, so the softmax is taken of the head applied to the features already
    computed: the same numbers as a second forward pass, at half the cost.
    """
    feats, soft = [], []
    with torch.no_grad():
        for i in range(0, len(X), batch):
            f = net.features(X[i:i + batch])
            feats.append(f)
            if probs:
                soft.append(torch.softmax(net.head(f), 1))
    return torch.cat(feats).double().numpy(), (torch.cat(soft).double().numpy() if probs else None)


def probe_accuracy(Ftr, ytr, Fte, yte) -> float:
    """Ground truth at ci: test accuracy of a logistic-regression probe (scikit-learn) on frozen, standardised
    features.

    Explained in chapters/transferability-benchmarks/02_experiments.md.
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    if len(Ftr) != len(ytr) or len(Fte) != len(yte):
        raise ValueError("features and labels must have the same number of rows")
    mu, sd = Ftr.mean(0), Ftr.std(0) + 1e-6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = LogisticRegression(max_iter=150, C=0.5).fit((Ftr - mu) / sd, ytr)
    return float(clf.score((Fte - mu) / sd, yte))


def finetune_accuracy(model: ZooModel, Xtr, ytr, Xte, yte, epochs: int, seed: int, lr: float = 1e-3,
                      batch: int = 64) -> float:
    """Ground truth at full: fine-tune a copy of the whole network with a new head for ``epochs`` epochs (Adam),
    then its test accuracy.

    Explained in chapters/transferability-benchmarks/02_experiments.md.
    """
    epochs = check_int("epochs", epochs)
    net = copy.deepcopy(model.net)
    torch.manual_seed(seed)
    net.head = nn.Linear(net.feat_dim, int(ytr.max()) + 1)
    fit_classifier(net, Xtr, ytr, epochs=epochs, batch_size=batch, lr=lr, seed=seed)
    with torch.no_grad():
        return float((net(Xte).argmax(1) == yte).float().mean())


def run_zoo(zoo: str, seed: int, scale: str = "ci") -> ZooResult:
    """Pre-train zoo ``"A"`` or ``"B"`` from ``seed`` and measure it on the eight targets at ``scale``.

    Explained in chapters/transferability-benchmarks/02_experiments.md.
    """
    check_choice("zoo", zoo, ("A", "B"))
    check_choice("scale", scale, tuple(SIZES))
    seed = check_int("seed", seed, low=0)
    with thread_limit(1):           # tiny matrices: one thread each is fastest, above all on a busy machine
        return _run_zoo(zoo, seed, scale)


def _run_zoo(zoo, seed, scale):
    z = SIZES[scale]
    with stopwatch() as watch:
        models = pretrain(zoo_a_specs() if zoo == "A" else zoo_b_specs(), z["n_source"], z["steps"], seed,
                          batch=z["batch"])
    seconds = {"pretrain": watch.seconds, "truth": 0.0, **{k: 0.0 for k in (*METRICS, *PEERS)}}
    targets = list(TARGETS)
    acc = np.zeros((len(models), len(targets)))
    scores = {k: np.zeros_like(acc) for k in (*METRICS, *PEERS)}
    for t, task in enumerate(targets):
        X, y = task_copy(task, z["n_train"] + z["n_test"], seed + 7)
        X, y = torch.from_numpy(X), torch.from_numpy(y)
        Xtr, ytr, Xte, yte = X[:z["n_train"]], y[:z["n_train"]], X[z["n_train"]:], y[z["n_train"]:]
        for m, model in enumerate(models):
            Ftr, Ptr = _features(model.net, Xtr)
            with stopwatch() as watch:
                if z["truth"] == "probe":
                    Fte, _ = _features(model.net, Xte, probs=False)
                    acc[m, t] = probe_accuracy(Ftr, ytr.numpy(), Fte, yte.numpy())
                else:
                    acc[m, t] = finetune_accuracy(model, Xtr, ytr, Xte, yte, z["ft_epochs"], seed + 31 * m + t)
            seconds["truth"] += watch.seconds
            yn = ytr.numpy()
            for name, (fn, uses_p) in METRICS.items():
                with stopwatch() as watch:
                    scores[name][m, t] = fn(Ptr if uses_p else Ftr, yn)
                seconds[name] += watch.seconds
            for name, fn in zip(PEERS, (knn_accuracy, probe_subset_accuracy)):
                with stopwatch() as watch:
                    scores[name][m, t] = fn(Ftr, yn, seed=seed)
                seconds[name] += watch.seconds
    return ZooResult(zoo, seed, models, targets, acc, scores, seconds)


def _rankers(res: ZooResult, keep=None):
    keep = np.arange(len(res.models)) if keep is None else np.asarray(keep)
    acc = res.acc[keep]
    out = {name: s[keep] for name, s in res.scores.items()}
    out["static-size"] = np.repeat(static_size(len(keep))[:, None], acc.shape[1], 1) if res.zoo == "A" else \
        np.repeat(np.array([m.params for m in np.array(res.models, dtype=object)[keep]], float)[:, None],
                  acc.shape[1], 1)
    out["static-history"] = np.stack([static_history(acc, t) for t in range(acc.shape[1])], 1)
    return acc, out


def tau_table(res: ZooResult, keep=None) -> dict[str, np.ndarray]:
    """tau_w per target of every metric, peer and static ranker (name -> array over targets); ``keep`` selects
    models (indices into ``res.models``, which for zoo A are in the static ranker's order).

    Explained in chapters/transferability-benchmarks/02_experiments.md.
    """
    acc, rankers = _rankers(res, keep)
    return {name: np.array([tau_w(acc[:, t], s[:, t]) for t in range(acc.shape[1])]) for name, s in rankers.items()}


def fidelity_table(res: ZooResult) -> dict[str, np.ndarray]:
    """Fidelity (Pearson of accuracy gaps with score gaps) per target of every metric and peer.

    Explained in chapters/transferability-benchmarks/02_experiments.md.
    """
    return {name: np.array([fidelity(res.acc[:, t], s[:, t]) for t in range(res.acc.shape[1])])
            for name, s in res.scores.items()}


def ablation_taus(res: ZooResult, metric: str = "LogME") -> list[tuple[int, float]]:
    """Zoo A with its widest variants removed step by step: (models kept, mean tau_w of ``metric``) as the widest
    width of every family goes, then the next.

    Explained in chapters/transferability-benchmarks/02_experiments.md.
    """
    if res.zoo != "A":
        raise ValueError(f"res must be a zoo A result, got zoo {res.zoo!r}")
    check_choice("metric", metric, tuple(res.scores) + ("static-size", "static-history"))
    widths = sorted({m.width for m in res.models}, reverse=True)
    out = []
    for drop in range(len(widths) - 1):
        keep = [i for i, m in enumerate(res.models) if m.width not in widths[:drop]]
        out.append((len(keep), float(np.mean(tau_table(res, keep)[metric]))))
    return out
