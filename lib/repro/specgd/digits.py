"""A long-tailed version of scikit-learn's digits, and a small MLP trained by SGD, Adam or Muon.

Explained in chapters/specgd/02_experiments.md. This is the chapter's stand-in for the paper's
imbalanced image benchmarks: 8x8 digit images (64 features, 10 classes), a training set whose
class sizes fall off geometrically by a factor ``imbalance_ratio``, and balanced validation and
test sets. The MLP 64 -> h -> 10 has no biases, so every parameter is a matrix and all three
optimizers update exactly the same parameters.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from sklearn.datasets import load_digits

from ..common import check_int, check_positive, check_seeds
from ..nn import fit_classifier

from .data import long_tailed_priors
from .updates import check_method

__all__ = ["DIGIT_OPTIMIZERS", "DigitsData", "long_tailed_digits", "make_mlp", "make_optimizer",
           "train_digits", "digits_benchmark"]

DIGIT_OPTIMIZERS = ("sgd", "adam", "muon")


@dataclass(frozen=True)
class DigitsData:
    """Standardised features and labels: an imbalanced train split, balanced val and test splits.

    Explained in chapters/specgd/02_experiments.md. ``counts`` are the training class sizes.
    """

    X_train: torch.Tensor
    y_train: torch.Tensor
    X_val: torch.Tensor
    y_val: torch.Tensor
    X_test: torch.Tensor
    y_test: torch.Tensor
    counts: np.ndarray


def long_tailed_digits(imbalance_ratio: float = 20.0, n_val_per_class: int = 30,
                       n_test_per_class: int = 50, seed: int = 0) -> DigitsData:
    """Split load_digits into balanced val/test sets and a long-tailed training set.

    Explained in chapters/specgd/02_experiments.md. Per class, ``n_test_per_class`` and
    ``n_val_per_class`` images go to test and validation; from the rest, class k (in a
    seed-dependent order, so no digit is always the rare one) keeps n_max * pi_k / pi_max images,
    with pi the long-tailed priors of ratio ``imbalance_ratio``. Features are standardised with
    the training split's statistics.
    """
    check_int("seed", seed, 0)
    check_int("n_val_per_class", n_val_per_class)
    check_int("n_test_per_class", n_test_per_class)
    X, y = load_digits(return_X_y=True)
    K = 10
    priors = long_tailed_priors(K, imbalance_ratio)       # validates imbalance_ratio
    rng = np.random.default_rng(seed)
    order = rng.permutation(K)                             # order[r] = the class with the r-th largest prior
    per_class = [rng.permutation(np.flatnonzero(y == k)) for k in range(K)]
    n_pool = min(len(ix) for ix in per_class) - n_val_per_class - n_test_per_class
    if n_pool < 1:
        raise ValueError("n_val_per_class + n_test_per_class leaves no training images")
    n_keep = np.maximum(1, np.round(n_pool * priors / priors[0]).astype(int))
    tr, va, te = [], [], []
    for rank, k in enumerate(order):
        ix = per_class[k]
        te.append(ix[:n_test_per_class])
        va.append(ix[n_test_per_class:n_test_per_class + n_val_per_class])
        tr.append(ix[n_test_per_class + n_val_per_class:][:n_keep[rank]])
    tr, va, te = (np.concatenate(p) for p in (tr, va, te))
    mean, std = X[tr].mean(0), X[tr].std(0) + 1e-6
    f = lambda ix: torch.tensor((X[ix] - mean) / std, dtype=torch.float32)
    g = lambda ix: torch.tensor(y[ix], dtype=torch.long)
    return DigitsData(f(tr), g(tr), f(va), g(va), f(te), g(te), np.bincount(y[tr], minlength=K))


def make_mlp(hidden: int = 64, seed: int = 0) -> torch.nn.Sequential:
    """The 64 -> hidden -> 10 ReLU network without biases (two weight matrices), seeded.

    Explained in chapters/specgd/02_experiments.md.
    """
    check_int("hidden", hidden)
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(64, hidden, bias=False), torch.nn.ReLU(),
                               torch.nn.Linear(hidden, 10, bias=False))


def make_optimizer(name: str, params, lr: float) -> torch.optim.Optimizer:
    """SGD (momentum 0.9), Adam (defaults) or Muon (momentum 0.95, Nesterov), all without weight decay.

    Explained in chapters/specgd/02_experiments.md. Muon here is the practical optimizer, with its
    momentum; only its default weight decay (0.1) is switched off, to compare update rules alone.
    """
    check_method(name, DIGIT_OPTIMIZERS)
    check_positive("lr", lr)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=0.9)
    if name == "adam":
        return torch.optim.Adam(params, lr=lr)
    return torch.optim.Muon(params, lr=lr, weight_decay=0.0)


def _bacc(model, X, y) -> float:
    with torch.no_grad():
        pred = model(X).argmax(1)
    return float(torch.stack([(pred[y == k] == k).float().mean() for k in range(10)]).mean())


def train_digits(data: DigitsData, optimizer: str, lr: float, epochs: int = 30, batch_size: int = 32,
                 hidden: int = 64, seed: int = 0) -> dict:
    """Train the MLP with cross-entropy; return per-epoch balanced accuracies (index 0 = before training).

    Explained in chapters/specgd/02_experiments.md.
    """
    check_int("epochs", epochs)
    check_int("batch_size", batch_size)
    model = make_mlp(hidden, seed)
    opt = make_optimizer(optimizer, model.parameters(), lr)
    val, test = [], []

    def evaluate(epoch=None):
        val.append(_bacc(model, data.X_val, data.y_val))
        test.append(_bacc(model, data.X_test, data.y_test))

    evaluate()
    fit_classifier(model, data.X_train, data.y_train, epochs=epochs, batch_size=batch_size, optimizer=opt, seed=seed,
                   after_epoch=evaluate)
    return {"val": np.array(val), "test": np.array(test)}


def digits_benchmark(grids: dict, seeds, imbalance_ratio: float = 20.0, epochs: int = 30,
                     progress=None) -> dict:
    """For each optimizer and seed: best-over-(lr, epoch) by validation, reported on test.

    Explained in chapters/specgd/02_experiments.md. ``grids`` maps optimizer name -> lr list.
    Returns {optimizer: array of test balanced accuracies, one per seed}.
    """
    for name in grids:
        check_method(name, DIGIT_OPTIMIZERS)
    seeds = check_seeds(seeds)
    out = {name: [] for name in grids}
    loop = seeds if progress is None else progress(seeds)
    for s in loop:
        data = long_tailed_digits(imbalance_ratio, seed=s)
        for name, lrs in grids.items():
            runs = [train_digits(data, name, lr, epochs, seed=s) for lr in lrs]
            val = np.stack([r["val"] for r in runs])
            j, e = np.unravel_index(np.argmax(val), val.shape)
            out[name].append(runs[j]["test"][e])
    return {name: np.array(v) for name, v in out.items()}
