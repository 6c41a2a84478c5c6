"""The black box: a small temporal convolutional network (TCN) classifier, and its training.

Explained in chapters/timeseg/02_experiments.md. Residual blocks of two dilated convolutions (kernel 3, dilations
1, 2, 4, …, 'same' padding, dropout 0.1), then an average pool to a few time bins (so the head knows roughly *where*
a pattern is, which the LowVar-like labels need) and a linear layer. TimeSeg's code uses six blocks; we use three
with 32 channels. The explainer only calls it: ``model(x)`` maps ``(n, T)`` to logits ``(n, classes)``.
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..common.checks import check_int, check_positive
from ..nn import classifier_accuracy as accuracy      # the share of series whose argmax logit is the label
from ..nn import fit_classifier

__all__ = ["TCN", "train_blackbox", "accuracy"]


class _Block(nn.Module):
    def __init__(self, c_in: int, c_out: int, dilation: int, dropout: float):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(c_in, c_out, 3, padding=dilation, dilation=dilation), nn.ReLU(), nn.Dropout(dropout),
            nn.Conv1d(c_out, c_out, 3, padding=dilation, dilation=dilation), nn.ReLU(), nn.Dropout(dropout))
        self.skip = nn.Conv1d(c_in, c_out, 1) if c_in != c_out else nn.Identity()

    def forward(self, h):
        return torch.relu(self.net(h) + self.skip(h))


class TCN(nn.Module):
    """TCN classifier ``(n, T) -> logits (n, n_classes)``: ``blocks`` residual blocks of width ``channels``, then
    an average pool to ``bins`` time bins and a linear head.

    Explained in chapters/timeseg/02_experiments.md.
    """

    def __init__(self, n_classes: int, channels: int = 32, blocks: int = 3, bins: int = 8, dropout: float = 0.1):
        super().__init__()
        self.config = {"n_classes": check_int("n_classes", n_classes, low=2), "channels": check_int("channels", channels),
                       "blocks": check_int("blocks", blocks), "bins": check_int("bins", bins), "dropout": float(dropout)}
        layers, c = [], 1
        for b in range(blocks):
            layers.append(_Block(c, channels, 2 ** b, dropout))
            c = channels
        self.body = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool1d(bins)
        self.head = nn.Linear(channels * bins, n_classes)

    def forward(self, x):
        h = self.body(x[:, None, :])
        return self.head(self.pool(h).flatten(1))


def train_blackbox(x, y, n_classes: int, *, epochs: int = 15, lr: float = 1e-3, batch_size: int = 64,
                   seed: int = 0, channels: int = 32, blocks: int = 3) -> tuple[TCN, list[float]]:
    """Train a ``TCN`` with Adam (``lr``) and cross-entropy; returns ``(model in eval mode, loss per epoch)``.

    Explained in chapters/timeseg/02_experiments.md.
    """
    x = torch.as_tensor(np.asarray(x), dtype=torch.float32)
    y = torch.as_tensor(np.asarray(y), dtype=torch.long)
    if x.ndim != 2 or y.shape != (x.shape[0],):
        raise ValueError(f"x must be (n, T) and y (n,); got {tuple(x.shape)} and {tuple(y.shape)}")
    epochs, batch_size = check_int("epochs", epochs), check_int("batch_size", batch_size)
    torch.manual_seed(check_int("seed", seed, low=0))
    model = TCN(n_classes, channels=channels, blocks=blocks)
    losses = fit_classifier(model, x, y, epochs=epochs, batch_size=batch_size, lr=check_positive("lr", lr), seed=seed)
    return model, losses
