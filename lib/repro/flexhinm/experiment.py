"""The digits experiment: train dense MLPs, prune them by every method at every sparsity, fine-tune all at once.

Explained in chapters/flexhinm/02_experiments.md.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from ..common import check_int, check_seeds, stopwatch
from .mlp import accuracy, correct, digits_splits, finetune_hard_concrete, init_mlp, input_power, train_mlp
from .prune import METHODS, PrunedModel, hc_group_ids, hc_init_log_alpha, hc_project, prune_model

__all__ = ["DigitsExperiment", "digits_experiment", "semi_structured_times"]


@dataclass
class DigitsExperiment:
    """Everything the notebook reads: dense accuracy, pruned models, one-shot and fine-tuned accuracy.

    Explained in chapters/flexhinm/02_experiments.md. ``pruned[(method, sparsity)]`` is a list over seeds of
    :class:`repro.flexhinm.PrunedModel`; ``oneshot`` and ``tuned`` map the same keys to arrays over seeds;
    ``tuned_correct`` maps them to booleans (seeds, test images): which test images each fine-tuned model gets right
    (each seed has its own split, all of one size), for intervals paired over images.
    """

    seeds: list
    sparsities: list
    dense_acc: np.ndarray
    dense: tuple
    powers: list
    pruned: dict = field(default_factory=dict)
    oneshot: dict = field(default_factory=dict)
    tuned: dict = field(default_factory=dict)
    tuned_correct: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)


def _stack(models, attr):
    return [torch.as_tensor(np.stack([getattr(m, attr)[l] for m in models]), dtype=torch.float32)
            for l in range(len(getattr(models[0], attr)))]


def digits_experiment(seeds, sparsities, pretrain_steps: int = 600, finetune_steps: int = 300, v: int = 16,
                      gp: dict | None = None, hc: dict | None = None, progress=None) -> DigitsExperiment:
    """Run the whole digits comparison for ``seeds`` (one model and one split per seed) and ``sparsities``.

    Explained in chapters/flexhinm/02_experiments.md. ``gp`` goes to the gyro-permutation, ``hc`` to
    :func:`repro.flexhinm.finetune_hard_concrete` (``ramp_frac``, ``penalty``, ``gate_lr``, ``sharpness``).
    """
    seeds = check_seeds(seeds)
    pretrain_steps, finetune_steps = check_int("pretrain_steps", pretrain_steps), check_int("finetune_steps", finetune_steps)
    bar = progress or (lambda x, **k: x)
    data = digits_splits(seeds)
    with stopwatch() as watch:
        Ws, bs = train_mlp(*init_mlp(seeds), data.X_train, data.y_train, pretrain_steps, lr=3e-3, seed=seeds[0])
        powers = [p.numpy() for p in input_power(Ws, bs, data.X_train)]
        ex = DigitsExperiment(seeds, list(sparsities), accuracy(Ws, bs, data.X_test, data.y_test), (Ws, bs),
                              powers)
    ex.seconds["pretrain"] = watch.seconds
    # one-shot masks, model by model
    keys = [(m, s) for s in sparsities for m in METHODS]
    for m, s in bar(keys, desc="masks"):
        ex.pruned[(m, s)] = [prune_model([W[i].numpy() for W in Ws], [b[i].numpy() for b in bs],
                                         [p[i] for p in powers], m, s, v, gp, seed=seeds[i])
                             for i in range(len(seeds))]
    # one-shot accuracy and masked fine-tuning, all models in one batch; a method whose pruned models are
    # bit-identical to an earlier method's (FlexHiNM where its search keeps no dense vector is HiNM) is not trained
    # again but gets the results of its twin, which are the same bits (see _twins)
    twin = _twins(ex.pruned, keys)
    train_keys = [k for k in keys if twin[k] == k]
    flat = [pm for k in train_keys for pm in ex.pruned[k]]
    n = len(seeds)
    X, y = data.X_train.repeat(len(train_keys), 1, 1), data.y_train.repeat(len(train_keys), 1)
    Xt, yt = data.X_test.repeat(len(train_keys), 1, 1), data.y_test.repeat(len(train_keys), 1)
    W0, b0 = _stack(flat, "weights"), _stack(flat, "biases")
    masks = [torch.as_tensor(np.stack([pm.masks[l] for pm in flat]), dtype=torch.float32)
             for l in range(len(W0) - 1)] + [None]
    acc0 = accuracy(W0, b0, Xt, yt, masks)
    with stopwatch() as watch:
        W1, b1 = train_mlp(W0, b0, X, y, finetune_steps, lr=1e-3, masks=masks, seed=seeds[0] + 1, share=n)
    ex.seconds["finetune"] = watch.seconds
    acc1 = accuracy(W1, b1, Xt, yt, masks)
    hits1 = correct(W1, b1, Xt, yt, masks)
    for k in keys:
        j = train_keys.index(twin[k])
        ex.oneshot[k], ex.tuned[k] = acc0[j * n:(j + 1) * n].copy(), acc1[j * n:(j + 1) * n].copy()
        ex.tuned_correct[k] = hits1[j * n:(j + 1) * n].copy()
    if hc is not None:
        with stopwatch() as watch:
            _hard_concrete(ex, data, sparsities, finetune_steps, hc)
        ex.seconds["hard_concrete"] = watch.seconds
    return ex


def _same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _same_models(a, b) -> bool:
    """Whether two lists (over seeds) of :class:`PrunedModel` hold bit-identical weights, biases and masks."""
    return len(a) == len(b) and all(
        len(p.weights) == len(q.weights) and len(p.masks) == len(q.masks)
        and all(_same_bits(x, z) for x, z in zip(p.weights + p.biases + p.masks, q.weights + q.biases + q.masks))
        for p, q in zip(a, b))


def _twins(pruned, keys) -> dict:
    """``key -> the first key of keys whose models are bit-identical to key's`` (the key itself if none is earlier).

    Fine-tuning two bit-identical models gives bit-identical results: every model of the batch is computed on its
    own (one matrix product per model, element-wise Adam), its mini-batches depend only on its seed's position
    (``share``), and the loss (the mean over all models' rows times the number of models) gives each model the
    gradient of its own mean loss whatever the number of models. So :func:`digits_experiment` trains one model
    per twin set; we checked that the trained weights and accuracies at scale ci are the same bits as when every
    model is trained (tests/unit/test_flexhinm.py checks the twin results on a small run).
    """
    twin = {}
    for i, k in enumerate(keys):
        twin[k] = next((u for u in keys[:i] if twin[u] == u and _same_models(pruned[u], pruned[k])), k)
    return twin


def _hard_concrete(ex, data, sparsities, steps, hc):
    """FlexHiNM-GP's permuted weights and regions, fine-tuned by gradual pruning with Hard Concrete gates."""
    hc = dict(hc)
    flat = [pm for s in sparsities for pm in ex.pruned[("flexhinm-gp", s)]]
    n, L = len(ex.seeds), len(flat[0].masks)
    W0, b0 = _stack(flat, "weights"), _stack(flat, "biases")
    layouts = [[pm.layouts[l] for pm in flat] for l in range(L)]
    shapes = [W0[l].shape[1:] for l in range(L)]
    fixed, nm, ids, la = [], [], [], []
    for l in range(L):
        T = lambda a: torch.as_tensor(np.stack(a))
        f, g = np.zeros((len(flat),) + tuple(shapes[l]), bool), np.zeros((len(flat),) + tuple(shapes[l]), bool)
        for i, lay in enumerate(layouts[l]):
            ft, gt = f[i].reshape(-1, lay.v, shapes[l][1]), g[i].reshape(-1, lay.v, shapes[l][1])
            for t in range(ft.shape[0]):
                ft[t][:, lay.dense[t]] = True
                gt[t][:, lay.groups[t].ravel()] = True
        fixed.append(torch.as_tensor(f)), nm.append(torch.as_tensor(g))
        ids.append(T([hc_group_ids(tuple(shapes[l]), lay) for lay in layouts[l]]))
        S = [(pm.weights[l] ** 2) for pm in flat]
        la.append(T([hc_init_log_alpha(s, lay, hc.get("sharpness", 2.0)) for s, lay in zip(S, layouts[l])]).float())

    def project(log_alphas):
        return [torch.as_tensor(np.stack([hc_project(a.numpy(), lay) for a, lay in zip(log_alphas[l], layouts[l])]),
                                dtype=torch.float32) for l in range(L)]

    k = len(sparsities)
    X, y = data.X_train.repeat(k, 1, 1), data.y_train.repeat(k, 1)
    Xt, yt = data.X_test.repeat(k, 1, 1), data.y_test.repeat(k, 1)
    W1, b1, final = finetune_hard_concrete(W0, b0, X, y, fixed, nm, steps, int(hc.get("ramp_frac", 0.5) * steps),
                                           project, la, ids, gate_lr=hc.get("gate_lr", 0.05),
                                           penalty=hc.get("penalty", 1.0), seed=ex.seeds[0] + 1, share=n)
    acc = accuracy(W1, b1, Xt, yt, final + [None])
    for j, s in enumerate(sparsities):
        ex.tuned[("flexhinm-gp-hc", s)] = acc[j * n:(j + 1) * n]
        ex.pruned[("flexhinm-gp-hc", s)] = [
            PrunedModel(weights=[W[j * n + i].numpy() for W in W1], biases=[b[j * n + i].numpy() for b in b1],
                        masks=[final[l][j * n + i].numpy().astype(bool) for l in range(L)],
                        layouts=[layouts[l][j * n + i] for l in range(L)]) for i in range(n)]


def semi_structured_times(n: int = 4096, repeats: int = 50) -> dict:
    """Seconds per ``n x n`` half-precision matmul, dense and 2:4 (``to_sparse_semi_structured``), on a CUDA GPU.

    Explained in chapters/flexhinm/02_experiments.md. Raises ValueError without a CUDA GPU (the CPU has no sparse
    tensor cores); this chapter's recorded runs had none.
    """
    n, repeats = check_int("n", n), check_int("repeats", repeats)
    if not torch.cuda.is_available():
        raise ValueError("device: semi_structured_times needs a CUDA GPU with sparse tensor cores")
    from torch.sparse import to_sparse_semi_structured

    from .patterns import nm_mask

    W = torch.randn(n, n, device="cuda", dtype=torch.float16)
    mask = torch.as_tensor(nm_mask((W.float() ** 2).cpu().numpy(), 2, 4), device="cuda")
    Ws = to_sparse_semi_structured(W * mask)
    x = torch.randn(n, n, device="cuda", dtype=torch.float16)
    out = {}
    for name, A in (("dense", W * mask), ("2:4", Ws)):
        for _ in range(5):
            A @ x
        torch.cuda.synchronize()
        with stopwatch() as watch:
            for _ in range(repeats):
                A @ x
            torch.cuda.synchronize()
        out[name] = watch.seconds / repeats
    return out
