"""Data sets, splits and the chapter's studies (chapters/behavior-learning/02_experiments.md).

Bundled scikit-learn data only: breast cancer, wine, digits (classification), diabetes (regression), and a
synthetic data set drawn from a known utility U*(x, y) = m(x) y - y^2/2 through the Gibbs model, whose argmax is
y*(x) = m(x).
"""
from __future__ import annotations

import numpy as np
from sklearn import datasets
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from ..common import check_choice, check_int, check_positive, thread_limit
from .train import (Config, accuracy, fit_amortized, fit_blnetwork_classifier, fit_classifier, fit_dsm, fit_mlp,
                    _tensor)

DATASETS = {"breast cancer": datasets.load_breast_cancer, "wine": datasets.load_wine,
            "digits": datasets.load_digits, "diabetes": datasets.load_diabetes}
SIZES = {"ci": dict(epochs=40, seeds=3, peer_seeds=3, n_synth=600, term_seeds=8),
         "full": dict(epochs=100, seeds=4, peer_seeds=4, n_synth=2000, term_seeds=20)}


def load_split(name: str, seed: int, test: float = 0.25):
    """Standardised train/test split (stratified for classification), features scaled on the training part.
    (chapters/behavior-learning/02_experiments.md)"""
    name = check_choice("name", name, DATASETS)
    X, y = DATASETS[name](return_X_y=True)
    strat = None if name == "diabetes" else y
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=test, random_state=check_int("seed", seed, low=0),
                                      stratify=strat)
    sc = StandardScaler().fit(Xa)
    Xa, Xb = sc.transform(Xa), sc.transform(Xb)
    if name == "diabetes":
        mu, sd = ya.mean(), ya.std()
        ya, yb = (ya - mu) / sd, (yb - mu) / sd
    return Xa, Xb, ya, yb


def synthetic_ump(n: int, seed: int, d: int = 4, tau: float = 0.1):
    """x ~ U[-1, 1]^d, y ~ p(y|x) ∝ exp(U*(x, y)/tau) with U* = m(x) y - y^2/2, m(x) = tanh(2 x1) + x2 x3.

    The Gibbs model of this concave utility is N(m(x), tau); returns (X, y, y_star) with y_star = argmax_y U*.
    (chapters/behavior-learning/02_experiments.md)"""
    n, d, tau = check_int("n", n), check_int("d", d, low=3), check_positive("tau", tau)
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d))
    m = np.tanh(2 * X[:, 0]) + X[:, 1] * X[:, 2]
    return X, m + np.sqrt(tau) * rng.standard_normal(n), m


def classification_study(seed: int, scale: str = "ci", cfg: Config | None = None, widen: int = 3):
    """Ours, blnetwork, a `widen`x-wider MLP and logistic regression on the three classification sets.

    Split seeds are seed, seed+1, ...; blnetwork runs on the first ``peer_seeds`` of them. Returns one dict per
    (data set, split seed) with accuracies and seconds per epoch.
    (chapters/behavior-learning/02_experiments.md)"""
    z = SIZES[check_choice("scale", scale, SIZES)]
    cfg = cfg or Config(epochs=z["epochs"])
    rows = []
    with thread_limit(1):       # tiny matrices: one thread, no spinning pool on a shared machine
        _classify(rows, seed, z, cfg, widen)
    return rows


def _classify(rows, seed, z, cfg, widen):
    for name in ("breast cancer", "wine", "digits"):
        for j in range(z["seeds"]):
            s = seed + j
            Xa, Xb, ya, yb = load_split(name, s)
            k = int(ya.max()) + 1
            ours, t_ours = fit_classifier(Xa, ya, k, cfg, s)
            mlp, t_mlp = fit_mlp(Xa, ya, k, [widen * h for h in cfg.hidden], cfg, s)
            lr = LogisticRegression(max_iter=2000).fit(Xa, ya)
            row = dict(data=name, seed=s, k=k, ours=accuracy(ours, Xb, yb), mlp=accuracy(mlp, Xb, yb),
                       logreg=float(lr.score(Xb, yb)), t_ours=t_ours, t_mlp=t_mlp, blnet=np.nan, t_blnet=np.nan)
            if j < z["peer_seeds"]:
                peer, t_peer = fit_blnetwork_classifier(Xa, ya, k, cfg, s)
                row.update(blnet=accuracy(peer, Xb, yb), t_blnet=t_peer)
            rows.append(row)


def regression_study(seed: int, scale: str = "ci", cfg: Config | None = None):
    """DSM and the amortized predictor with w_bl in {0, 1}: on the synthetic UMP data (R² against y* = argmax U*)
    and on diabetes (R² against y); ridge regression as the linear baseline. Returns a dict of R² values.
    (chapters/behavior-learning/02_experiments.md)"""
    z = SIZES[check_choice("scale", scale, SIZES)]
    cfg = cfg or Config(epochs=z["epochs"])
    with thread_limit(1):
        return _regress(seed, z, cfg)


def bl_term_study(seed: int, scale: str = "ci", cfg: Config | None = None) -> np.ndarray:
    """R² of the amortized predictor with the BL term minus without it (w_bl = 1 minus w_bl = 0), on the synthetic
    UMP data, for the data-and-training seeds seed, seed+1, ... (``term_seeds`` of them): one difference per seed.
    (chapters/behavior-learning/02_experiments.md)"""
    z = SIZES[check_choice("scale", scale, SIZES)]
    cfg = cfg or Config(epochs=z["epochs"])
    diffs = []
    with thread_limit(1):
        for s in range(check_int("seed", seed, low=0), seed + z["term_seeds"]):
            X, y, ystar = synthetic_ump(z["n_synth"], s)
            n = len(X) * 3 // 4
            bl, _ = fit_dsm(X[:n], y[:n], cfg, s)
            with_term, without = (_amortized_r2(bl, X, y, ystar, n, cfg, s, w) for w in (1.0, 0.0))
            diffs.append(with_term - without)
    return np.array(diffs)


def _amortized_r2(bl, X, y, ystar, n, cfg, seed, w_bl):
    """R² against y* on rows n: of the amortized predictor trained on rows :n with BL-term weight w_bl."""
    g = fit_amortized(bl, X[:n], y[:n], cfg, seed, w_bl=w_bl)
    return float(r2_score(ystar[n:], g(_tensor(X[n:]))[:, 0].detach().numpy()))


def _regress(seed, z, cfg):
    out = {}
    X, y, ystar = synthetic_ump(z["n_synth"], seed)
    n = len(X) * 3 // 4
    bl, _ = fit_dsm(X[:n], y[:n], cfg, seed)
    for w in (0.0, 1.0):
        out[f"synth w_bl={w:g}"] = _amortized_r2(bl, X, y, ystar, n, cfg, seed, w)
    out["synth ridge"] = float(r2_score(ystar[n:], Ridge().fit(X[:n], y[:n]).predict(X[n:])))
    grid = np.linspace(-2.5, 2.5, 201)
    xs = _tensor(X[n:n + 64]).repeat_interleave(len(grid), 0)
    u = bl(xs, _tensor(np.tile(grid, 64))).detach().numpy().reshape(64, len(grid))
    out["synth argmax U"] = float(r2_score(ystar[n:n + 64], grid[u.argmax(1)]))
    Xa, Xb, ya, yb = load_split("diabetes", seed)
    bl, _ = fit_dsm(Xa, ya, cfg, seed)
    for w in (0.0, 1.0):
        g = fit_amortized(bl, Xa, ya, cfg, seed, w_bl=w)
        out[f"diabetes w_bl={w:g}"] = float(r2_score(yb, g(_tensor(Xb))[:, 0].detach().numpy()))
    out["diabetes ridge"] = float(r2_score(yb, Ridge().fit(Xa, ya).predict(Xb)))
    return out
