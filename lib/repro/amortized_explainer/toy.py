"""The additive-logit toy, where the exact attribution is known: f(x) = wᵀx + c on the logit, baseline b, so that
Δ(I) = Σ_{i∈I} w_i (x_i − b_i) for every removed set I, and a = w ⊙ (x − b) maximises every saliency-view metric.

Explained in chapters/amortized-explainer/01_theory.md: training φ with L_LC alone recovers w ⊙ (x − b) with the
paper's sign and its negative with the repository's kept-set sign.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .faithfulness.metrics import pearson
from ..common.checks import check_int
from .explainer import Explainer, TrainLog, tokens, train_explainer

__all__ = ["ToyResult", "additive_logit_model", "run_toy"]


def additive_logit_model(w: torch.Tensor, c: float = 0.0):
    """Scores ``(n, 2)``: class 0 has logit 0, class 1 has logit wᵀx + c (so Δ on class 1 is additive).

    Explained in chapters/amortized-explainer/01_theory.md.
    """
    w = torch.as_tensor(w, dtype=torch.float32)

    def model(x):
        return torch.stack([torch.zeros(x.shape[0]), x @ w + c], 1)

    return model


@dataclass
class ToyResult:
    """Per-sample Pearson of φ(x) with w ⊙ (x − b) on held-out inputs, for each sign, and the training logs.

    Explained in chapters/amortized-explainer/01_theory.md.
    """

    pearson: dict
    logs: dict
    w: torch.Tensor
    example: dict


def run_toy(d: int = 8, n_train: int = 256, n_test: int = 128, epochs: int = 40, k: int = 32, seed: int = 0,
            signs=("paper", "code")) -> ToyResult:
    """Train φ with L_LC only on the toy for each sign; report the mean per-sample Pearson with w ⊙ x (b = 0).

    Explained in chapters/amortized-explainer/01_theory.md.
    """
    d, n_train, n_test = check_int("d", d, 2), check_int("n_train", n_train, 2), check_int("n_test", n_test, 1)
    gen = torch.Generator().manual_seed(check_int("seed", seed, 0))
    w = torch.randn(d, generator=gen)
    x = torch.randn(n_train + n_test, d, generator=gen)
    xtr, xte = x[:n_train], x[n_train:]
    model = additive_logit_model(w)
    groups = torch.arange(d)
    exact = w * xte
    out, logs, example = {}, {}, {}
    for sign in signs:
        torch.manual_seed(seed)
        phi = Explainer(d)
        logs[sign] = train_explainer(phi, xtr, groups, d, model=model, mode="lc", epochs=epochs, k=k, sign=sign,
                                     target=torch.ones(n_train, dtype=torch.long), seed=seed)
        with torch.no_grad():
            a = phi(tokens(xte, groups, d))
        out[sign] = float(pearson(a, exact).mean())
        example[sign] = a[0]
    example["exact"] = exact[0]
    return ToyResult(pearson=out, logs=logs, w=w, example=example)
