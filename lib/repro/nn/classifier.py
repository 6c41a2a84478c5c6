"""Fitting a classifier by minibatch cross-entropy, and its accuracy: the loop that several chapters share.

Used by chapters/transferability-benchmarks (pre-training and fine-tuning the zoo), chapters/timeseg (the black-box
TCN), chapters/specgd (the digits MLP under three optimisers), chapters/amortized-explainer (the target classifier)
and chapters/behavior-learning (the BL models and the MLP baseline). One schedule of rows per call:

- ``epochs=E``: E passes, each over a fresh permutation of the rows (``torch.randperm``) cut into batches;
- ``steps=S``: S batches of rows drawn with replacement (``torch.randint``), or, with ``batch_size=None``, S steps on
  every row in order (full batch, no random numbers).

The rows come from a private ``torch.Generator`` seeded with ``seed``, so the global RNG (model initialisation,
dropout) is the caller's alone: seed it and build the model before the call, as every chapter does.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import torch
from torch import nn

from ..common import check_int, check_non_negative, check_positive

__all__ = ["fit_classifier", "fit_minibatches", "classifier_accuracy"]


def _check_schedule(n, epochs, steps, batch_size):
    n = check_int("n", n)
    if (epochs is None) == (steps is None):
        raise ValueError(f"give exactly one of epochs and steps, got epochs={epochs!r} and steps={steps!r}")
    if epochs is not None and batch_size is None:
        raise ValueError("batch_size=None (full batch) needs steps, not epochs")
    if batch_size is not None:
        check_int("batch_size", batch_size)
    return n, (None if epochs is None else check_int("epochs", epochs)), (None if steps is None else
                                                                        check_int("steps", steps))


def _draw(n: int, batch_size: int | None, generator: torch.Generator):
    return slice(None) if batch_size is None else torch.randint(n, (batch_size,), generator=generator)


def _step(optimizer, batch_loss, rows) -> float:
    loss = batch_loss(rows)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return float(loss.detach())


def fit_minibatches(batch_loss: Callable, n: int, optimizer: torch.optim.Optimizer, *, epochs: int | None = None,
                    steps: int | None = None, batch_size: int | None = 64, seed: int = 0,
                    after_epoch: Callable[[int], None] | None = None) -> list[float]:
    """Minimise ``batch_loss(rows)`` (a scalar tensor for a batch of row indices, or ``slice(None)``) over ``n``
    rows with ``optimizer``, one step per batch of the schedule (module docstring), the rows drawn from a generator
    seeded with ``seed``. Returns the mean loss of each epoch (weighted by batch size), or with ``steps`` the loss
    of each step; ``after_epoch(epoch)`` runs after each epoch.

    Explained in chapters/behavior-learning/02_experiments.md.
    """
    if not callable(batch_loss):
        raise ValueError("batch_loss must be a callable rows -> scalar loss tensor")
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise ValueError(f"optimizer must be a torch.optim.Optimizer, got {type(optimizer).__name__}")
    n, epochs, steps = _check_schedule(n, epochs, steps, batch_size)
    generator = torch.Generator().manual_seed(check_int("seed", seed, low=0))
    if steps is not None:
        return [_step(optimizer, batch_loss, _draw(n, batch_size, generator)) for _ in range(steps)]
    losses = []
    for epoch in range(epochs):
        total = 0.0
        for rows in torch.randperm(n, generator=generator).split(batch_size):
            total += _step(optimizer, batch_loss, rows) * len(rows)
        losses.append(total / n)
        if after_epoch is not None:
            after_epoch(epoch)
    return losses


def _as_rows(X, y) -> tuple[torch.Tensor, torch.Tensor]:
    X = X if torch.is_tensor(X) else torch.as_tensor(np.asarray(X), dtype=torch.float32)
    y = torch.as_tensor(y if torch.is_tensor(y) else np.asarray(y), dtype=torch.long)
    if y.ndim != 1 or X.ndim < 1 or len(X) != len(y):
        raise ValueError(f"X must hold one row per label of the 1-d y; got X {tuple(X.shape)} and y {tuple(y.shape)}")
    if len(y) == 0:
        raise ValueError("X and y are empty")
    return X, y


def _adam(model, optimizer, lr, weight_decay) -> torch.optim.Optimizer:
    if optimizer is not None:
        if lr is not None or weight_decay is not None:
            raise ValueError("give either optimizer or lr and weight_decay (for the default Adam), not both")
        return optimizer
    lr = check_positive("lr", 1e-3 if lr is None else lr)
    weight_decay = check_non_negative("weight_decay", 0.0 if weight_decay is None else weight_decay)
    return torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)


def fit_classifier(model: nn.Module, X, y, *, epochs: int | None = None, steps: int | None = None,
                   batch_size: int | None = 64, optimizer: torch.optim.Optimizer | None = None,
                   lr: float | None = None, weight_decay: float | None = None, label_smoothing: float = 0.0,
                   seed: int = 0, forward: Callable | None = None,
                   after_epoch: Callable[[int], None] | None = None) -> list[float]:
    """Train ``model`` (logits ``forward(X)``, by default ``model(X)``) on labels ``y`` by cross-entropy with
    ``label_smoothing``, on the schedule of ``epochs`` or ``steps`` (module docstring), rows drawn from a generator
    seeded with ``seed``. The optimiser is ``optimizer`` if given, else Adam with ``lr`` (default 1e-3) and
    ``weight_decay`` (default 0). The model trains in train mode and is left in eval mode. Returns the losses of
    `fit_minibatches`.

    Explained in chapters/timeseg/02_experiments.md. ``X`` and ``y`` may be tensors or arrays (arrays become float32
    features and int64 labels).
    """
    X, y = _as_rows(X, y)
    opt = _adam(model, optimizer, lr, weight_decay)
    forward = model if forward is None else forward
    label_smoothing = check_non_negative("label_smoothing", label_smoothing)

    def batch_loss(rows):
        return nn.functional.cross_entropy(forward(X[rows]), y[rows], label_smoothing=label_smoothing)

    model.train()
    losses = fit_minibatches(batch_loss, len(y), opt, epochs=epochs, steps=steps, batch_size=batch_size, seed=seed,
                             after_epoch=after_epoch)
    model.eval()
    return losses


@torch.no_grad()
def classifier_accuracy(model: nn.Module, X, y, *, forward: Callable | None = None) -> float:
    """The share of rows whose largest logit (``forward(X)``, by default ``model(X)``) is the label, counted exactly
    (float64).

    Explained in chapters/timeseg/02_experiments.md. ``X`` becomes float32.
    """
    X = X.to(torch.float32) if torch.is_tensor(X) else torch.as_tensor(np.asarray(X), dtype=torch.float32)
    y = y.numpy() if torch.is_tensor(y) else np.asarray(y)
    if y.ndim != 1 or len(X) != len(y):
        raise ValueError(f"X must hold one row per label of the 1-d y; got X {tuple(X.shape)} and y {y.shape}")
    logits = (model if forward is None else forward)(X)
    return float((logits.argmax(1).numpy() == y).mean())
