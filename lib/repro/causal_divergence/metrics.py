"""Interchange-intervention accuracy (IIA). Explained in chapters/causal-divergence/02_experiments.md."""
from __future__ import annotations

import numpy as np
import torch


def iia(outputs, y_cf) -> float:
    """Fraction of intervened runs whose prediction equals the counterfactual label `y_cf`.

    `outputs` is either logits (n, classes), from which the argmax is taken, or predicted labels (n,).
    Explained in chapters/causal-divergence/02_experiments.md.
    """
    out = outputs.detach().cpu().numpy() if isinstance(outputs, torch.Tensor) else np.asarray(outputs)
    y = y_cf.detach().cpu().numpy() if isinstance(y_cf, torch.Tensor) else np.asarray(y_cf)
    pred = out.argmax(-1) if out.ndim == 2 else out
    if pred.ndim != 1 or pred.shape[0] != y.shape[0]:
        raise ValueError(f"outputs and y_cf must describe the same number of runs; got {out.shape} and {y.shape}")
    if len(y) == 0:
        raise ValueError("y_cf is empty")
    return float((pred == y).mean())
