"""Training loops: ours (CE, DSM, amortized), the MLP baseline and the same runs through blnetwork
(chapters/behavior-learning/02_experiments.md). Every loop is plain minibatch Adam for a fixed number of epochs,
without early stopping, so that ours and blnetwork's see the same configuration; each returns seconds per epoch.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from ..common import check_int, check_non_negative, check_positive, stopwatch
from ..nn import classifier_accuracy, fit_minibatches
from .model import BLModel, ce_loss, dsm_loss


@dataclass
class Config:
    """Shared by ours and blnetwork: blocks, epochs, batch, Adam's rate and weight decay, DSM's sigma and tau.
    (chapters/behavior-learning/02_experiments.md)"""
    hidden: tuple = (16, 8)
    epochs: int = 60
    batch: int = 64
    lr: float = 3e-3
    weight_decay: float = 0.0
    sigma: float = 0.5
    tau: float = 1.0

    def __post_init__(self):
        check_int("epochs", self.epochs), check_int("batch", self.batch)
        check_positive("lr", self.lr), check_non_negative("weight_decay", self.weight_decay)
        check_positive("sigma", self.sigma), check_positive("tau", self.tau)


def _tensor(a, dtype=torch.float32):
    return torch.as_tensor(np.asarray(a), dtype=dtype)


def _loop(params, loss_fn, n, cfg, seed):
    """Fixed-epoch minibatch Adam over n rows (`repro.nn.fit_minibatches`); returns seconds per epoch.

    Adam runs its multi-tensor (``foreach``) implementation: on the CPU it applies the same per-tensor operations
    as the default single-tensor loop, in the same order, so the parameters come out bitwise identical, with less
    Python overhead per step (these models have a dozen small parameter tensors and steps of a few milliseconds).
    """
    opt = torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay, foreach=True)
    with stopwatch() as watch:
        fit_minibatches(loss_fn, n, opt, epochs=cfg.epochs, batch_size=cfg.batch, seed=seed)
    return watch.seconds / cfg.epochs


def fit_classifier(X, y, k: int, cfg: Config, seed: int):
    """Our BL classifier trained by cross-entropy over enumerated labels; returns (model, seconds per epoch).
    (chapters/behavior-learning/02_experiments.md)"""
    torch.manual_seed(seed)
    X, y = _tensor(X), _tensor(y, torch.long)
    model = BLModel(X.shape[1], check_int("k", k, low=2), cfg.hidden)
    sec = _loop(model.parameters(), lambda i: ce_loss(model.logits(X[i]), y[i], cfg.tau), len(X), cfg, seed)
    return model.eval(), sec


def fit_blnetwork_classifier(X, y, k: int, cfg: Config, seed: int):
    """The same through blnetwork's DiscreteTrainer (no early stopping, K fixed before fit: see the gotcha).
    (chapters/behavior-learning/02_experiments.md)"""
    from blnetwork.model import BLDeep
    from blnetwork.training import DiscreteTrainer, OptimConfig, TrainConfig
    torch.manual_seed(seed)
    X, y = _tensor(X), _tensor(y, torch.long)
    model = BLDeep(list(cfg.hidden), task="discrete", num_classes=k)
    model.build_for_discrete_inference(X[:1], num_classes=k)
    trainer = DiscreteTrainer(model, OptimConfig("adam", cfg.lr, cfg.weight_decay),
                              TrainConfig(max_epochs=cfg.epochs, batch_size=cfg.batch, early_stop=False, seed=seed,
                                          device="cpu"))
    with stopwatch() as watch:
        trainer.fit(X, y)
        model.eval()
    return model, watch.seconds / cfg.epochs


class MLP(nn.Module):
    """A ReLU MLP; ``widths`` its hidden layers (the baseline is 3x the BL blocks' widths).
    (chapters/behavior-learning/02_experiments.md)"""

    def __init__(self, d_in: int, widths, d_out: int):
        super().__init__()
        dims = [check_int("d_in", d_in)] + [check_int("widths", w) for w in widths]
        layers = []
        for a, b in zip(dims[:-1], dims[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        self.net = nn.Sequential(*layers, nn.Linear(dims[-1], check_int("d_out", d_out)))

    def forward(self, x):
        return self.net(x)


def fit_mlp(X, y, k: int, widths, cfg: Config, seed: int):
    """The MLP baseline by cross-entropy, same loop and epochs as BL; returns (model, seconds per epoch).
    (chapters/behavior-learning/02_experiments.md)"""
    torch.manual_seed(seed)
    X, y = _tensor(X), _tensor(y, torch.long)
    model = MLP(X.shape[1], widths, k)
    sec = _loop(model.parameters(), lambda i: F.cross_entropy(model(X[i]), y[i]), len(X), cfg, seed)
    return model.eval(), sec


def accuracy(model, X, y) -> float:
    """Test accuracy of a BL model (argmax of its logits) or of an MLP (argmax of its outputs).
    (chapters/behavior-learning/02_experiments.md)"""
    return classifier_accuracy(model, X, y, forward=getattr(model, "logits", None))


def fit_dsm(X, y, cfg: Config, seed: int):
    """Our BL utility for a scalar y, trained by denoising score matching; returns (model, seconds per epoch).
    (chapters/behavior-learning/02_experiments.md)"""
    torch.manual_seed(seed)
    X, y = _tensor(X), _tensor(y)
    model = BLModel(X.shape[1], 1, cfg.hidden, task="continuous")
    sec = _loop(model.parameters(), lambda i: dsm_loss(model, X[i], y[i], cfg.sigma, cfg.tau), len(X), cfg, seed)
    return model.eval(), sec


def fit_amortized(bl, X, y, cfg: Config, seed: int, w_bl: float = 1.0, w_mse: float = 1.0, width: int = 64):
    """The amortized predictor g: minimise -w_bl mean U(x, g(x)) + w_mse MSE(g(x), y) with the BL model frozen.

    With w_bl = 0 it is a plain MLP regression. Returns g (an MLP with one hidden layer of ``width``).
    With w_bl = 0 the BL term is not evaluated at all: it would add exactly zero to the loss and to every gradient,
    so skipping it trains the same g (bitwise) with a cheaper step (no forward or backward pass through the BL model).
    (chapters/behavior-learning/02_experiments.md)"""
    check_non_negative("w_bl", w_bl), check_non_negative("w_mse", w_mse)
    torch.manual_seed(seed)
    X, y = _tensor(X), _tensor(y)
    for p in bl.parameters():
        p.requires_grad_(False)
    g = MLP(X.shape[1], [width], 1)

    def loss(i):
        yh = g(X[i])[:, 0]
        mse = w_mse * F.mse_loss(yh, y[i])
        return mse if w_bl == 0 else -w_bl * bl(X[i], yh).mean() + mse
    _loop(g.parameters(), loss, len(X), cfg, seed)
    return g.eval()
