"""The baselines and peers: logistic regression on pixels, a small conditional CNN, spectral biclustering.

Explained in chapters/and-or-templates/02_experiments.md ("Against pixels and a CNN", "Block pursuit is
biclustering"). The CNN sees the image and the theme (one-hot, joined before its last layer), is trained on the binary
good/bad labels only, and its logit is its score.
"""
from __future__ import annotations


import numpy as np
import torch
from sklearn.cluster import SpectralBiclustering, SpectralCoclustering
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import adjusted_rand_score

from ..common import check_int, stopwatch, thread_limit


def pixel_logreg(X_train, y_train, X_test, C: float = 0.1) -> tuple[np.ndarray, int, float]:
    """Logistic regression on raw pixels: (test scores, number of parameters, fit seconds)
    (chapters/and-or-templates/02_experiments.md)."""
    X_train, X_test = np.asarray(X_train).reshape(len(X_train), -1), np.asarray(X_test).reshape(len(X_test), -1)
    if len(np.unique(y_train)) != 2:
        raise ValueError("y_train must hold both classes (good = 1 and bad = 0)")
    with stopwatch() as watch:
        model = LogisticRegression(C=C, max_iter=300).fit(X_train, y_train)
        scores = model.decision_function(X_test)
    return scores, X_train.shape[1] + 1, watch.seconds


class SmallCNN(torch.nn.Module):
    """Two strided convolutions (5x5 with 8 channels, 3x3 with 16, stride 2, ReLU), a 16-unit hidden layer that also
    sees the theme, one logit (chapters/and-or-templates/02_experiments.md)."""

    def __init__(self, n_themes: int, size: int = 49):
        super().__init__()
        self.conv = torch.nn.Sequential(torch.nn.Conv2d(1, 8, 5, stride=2, padding=2), torch.nn.ReLU(),
                                        torch.nn.Conv2d(8, 16, 3, stride=2, padding=1), torch.nn.ReLU())
        flat = 16 * ((size + 3) // 4) ** 2
        self.hidden = torch.nn.Linear(flat + n_themes, 16)
        self.out = torch.nn.Linear(16, 1)

    def forward(self, x, theme_onehot):
        h = self.conv(x[:, None]).flatten(1)
        return self.out(torch.relu(self.hidden(torch.cat([h, theme_onehot], 1)))).squeeze(1)


def n_parameters(model: torch.nn.Module) -> int:
    """Number of trainable parameters of a torch model (chapters/and-or-templates/02_experiments.md)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def _cnn_inputs(X, theme, y, n_themes: int):
    """Images as float32, theme ids one-hot, labels as float targets; a ValueError when their lengths differ."""
    X = torch.as_tensor(np.asarray(X), dtype=torch.float32)
    if len(X) != len(y) or len(X) != len(theme):
        raise ValueError(f"X, theme and y must have the same length, got {len(X)}, {len(theme)}, {len(y)}")
    onehot = torch.nn.functional.one_hot(torch.as_tensor(theme), n_themes).float()
    return X, onehot, torch.as_tensor(np.asarray(y), dtype=torch.float32)


def train_cnn(X, theme, y, n_themes: int, steps: int = 300, batch: int = 64, lr: float = 3e-3, seed: int = 0):
    """Train SmallCNN on images X (N, H, W), theme ids and binary labels; returns (model, fit seconds)
    (chapters/and-or-templates/02_experiments.md)."""
    X, onehot, target = _cnn_inputs(X, theme, y, n_themes)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = SmallCNN(n_themes, X.shape[-1])
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    with stopwatch() as watch, thread_limit(2):
        for _ in range(check_int("steps", steps)):
            idx = torch.randint(len(X), (batch,), generator=gen)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(model(X[idx], onehot[idx]), target[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model, watch.seconds


def cnn_validation_curve(X, theme, y, n_themes: int, max_steps: int = 4000, every: int = 200, holdout: float = 0.2,
                         batch: int = 64, lr: float = 3e-3, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(steps, validation loss, validation AUC): train SmallCNN as `train_cnn` does on all but a random `holdout`
    share of the training images and record the binary cross-entropy and the AUC of good against bad on the held-out
    share every `every` steps. The chapter chose the CNN's training length on development seed 100 from this curve
    (chapters/and-or-templates/02_experiments.md)."""
    from sklearn.metrics import roc_auc_score

    X, onehot, target = _cnn_inputs(X, theme, y, n_themes)
    if not 0 < holdout < 1:
        raise ValueError(f"holdout must lie strictly between 0 and 1, got {holdout}")
    check_int("max_steps", max_steps)
    check_int("every", every)
    order = np.random.default_rng(seed).permutation(len(X))
    n_val = max(1, int(round(holdout * len(X))))
    val, fit = torch.as_tensor(order[:n_val]), torch.as_tensor(order[n_val:])
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = SmallCNN(n_themes, X.shape[-1])
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    steps, losses, aucs = [], [], []
    with thread_limit(2):
        for step in range(1, max_steps + 1):
            idx = fit[torch.randint(len(fit), (batch,), generator=gen)]
            loss = torch.nn.functional.binary_cross_entropy_with_logits(model(X[idx], onehot[idx]), target[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % every == 0:
                with torch.no_grad():
                    logit = model(X[val], onehot[val])
                steps.append(step)
                losses.append(float(torch.nn.functional.binary_cross_entropy_with_logits(logit, target[val])))
                aucs.append(float(roc_auc_score(target[val].numpy(), logit.numpy()))
                            if len(np.unique(target[val].numpy())) == 2 else float("nan"))
    return np.array(steps), np.array(losses), np.array(aucs)


def cnn_scores(model, X, theme, n_themes: int) -> np.ndarray:
    """The CNN's logits on images X with theme ids (chapters/and-or-templates/02_experiments.md)."""
    with torch.no_grad(), thread_limit(2):
        onehot = torch.nn.functional.one_hot(torch.as_tensor(theme), n_themes).float()
        return model(torch.as_tensor(np.asarray(X), dtype=torch.float32), onehot).numpy()


def spectral_peers(R, truths: dict, n_clusters: int, seed: int = 0) -> list[dict]:
    """scikit-learn's SpectralCoclustering and SpectralBiclustering on a response matrix R: the adjusted Rand
    index of their row clusters against each partition in `truths` (name -> labels), and their fit time
    (chapters/and-or-templates/02_experiments.md)."""
    R = np.asarray(R, dtype=float) + 1e-6                       # both need strictly positive row and column sums
    out = []
    for name, model in [("SpectralCoclustering", SpectralCoclustering(n_clusters=n_clusters, random_state=seed)),
                        ("SpectralBiclustering", SpectralBiclustering(n_clusters=n_clusters, random_state=seed))]:
        with stopwatch() as watch:
            model.fit(R)
        out.append(dict(method=name, seconds=watch.seconds,
                        **{f"ari_{k}": adjusted_rand_score(v, model.row_labels_) for k, v in truths.items()}))
    return out
