"""Temporal sparse autoencoders (T-SAE): a Matryoshka SAE whose high-level latents agree across adjacent tokens.

Explained in chapters/temporal-sae/ (01_theory, 02_experiments), a small reproduction of Bhalla, Oesterling et al.,
"Temporal Sparse Autoencoders" (ICLR 2026, arXiv 2511.05541). The SAE family itself lives in `repro.nn.sae`; the
synthetic language in `.hmm_lda`. This module adds:

- the symmetric InfoNCE loss over adjacent tokens on the first h ("high-level") latents, read either before the
  sparsifying activation ("pre": W_enc x + b_enc, as the paper's text says) or after it ("post": the sparse code, as
  its equation defines z_t); `temporal_loss`, `contrastive_loss`;
- batches of (token, partner) pairs from documents: the previous token, or a uniformly random earlier one;
  `pair_batches`;
- `train_tsae`: BatchTopK, Matryoshka and T-SAE from one function (alpha = 0 gives the Matryoshka objective);
- the language model whose residual stream the SAEs read, trained on the synthetic language (`train_language_model`,
  `activations`);
- evaluation: linear probes for topic / syntactic state / document on codes, reading every latent or, as the ICLR
  paper's sparse probes do, k latents per class picked by the difference of class means (`probe_accuracy`,
  `sparse_latents`, `sparse_probe_accuracy`, `probe_splits`, `probe_suite`), the cosine of high-level codes between adjacent tokens (`adjacent_cosine`), and which label each
  high-level latent tracks (`mutual_information`, `latent_labels`);
- the peer: SAELens's BatchTopK SAE trained on the same activations (`saelens_batchtopk`).
"""
from __future__ import annotations

import warnings

import numpy as np
import torch
import torch.nn.functional as F

from ..common import (check_between, check_choice, check_int, check_non_negative, check_positive, stopwatch,
                      thread_limit)
from ..nn.contrastive import symmetric_info_nce
from ..nn.sae import SAE, encode_all, train_sae
from .hmm_lda import Corpus, make_corpus

READINGS = ("pre", "post")
PARTNERS = ("adjacent", "random_past")


# ---------------------------------------------------------------------- the contrastive term
def contrastive_loss(z_t: torch.Tensor, z_prev: torch.Tensor, temperature: float = 0.1) -> torch.Tensor:
    """Symmetric InfoNCE on cosine similarity: pair i is (z_t[i], z_prev[i]); the other rows are negatives.

    L = CE(S, I) + CE(S^T, I) with S_ij = cos(z_t[i], z_prev[j]) / temperature: each token must pick its own
    partner among the batch's partners, and each partner its own token. An all-zero row has cosine 0 with everything.
    Explained in chapters/temporal-sae/01_theory.md.
    """
    if z_t.shape != z_prev.shape or z_t.ndim != 2:
        raise ValueError(f"z_t and z_prev must be (N, h) tensors of one shape, got {tuple(z_t.shape)}, "
                         f"{tuple(z_prev.shape)}")
    check_positive("temperature", temperature)
    a = F.normalize(z_t, dim=-1, eps=1e-8)
    b = F.normalize(z_prev, dim=-1, eps=1e-8)
    return 2 * symmetric_info_nce(a @ b.t() / temperature)          # the sum of the two cross-entropies


def temporal_loss(alpha: float, temperature: float = 0.1, reading: str = "pre", n_high: int | None = None):
    """The extra loss for `train_sae`: alpha * contrastive_loss on the first `n_high` latents of paired batches.

    The batch holds N tokens followed by their N partners (see `pair_batches`). `reading="pre"` compares the
    pre-activations W_enc x + b_enc of the high-level latents; `reading="post"` compares their sparse codes.
    Explained in chapters/temporal-sae/01_theory.md.
    """
    check_choice("reading", reading, READINGS)
    check_non_negative("alpha", alpha)

    def extra(sae, x, out):
        if alpha == 0:
            return x.new_zeros(())
        h = n_high or sae.prefixes[0]
        z = (out.pre if reading == "pre" else out.codes)[:, :h]
        n = z.shape[0] // 2
        return alpha * contrastive_loss(z[:n], z[n:], temperature)

    return extra


def pair_batches(n_docs: int, doc_len: int, n_pairs: int, partner: str = "adjacent"):
    """A `batches(step, generator)` for `train_sae` over activations laid out document by document.

    Each call draws `n_pairs` tokens at positions t >= 1 and returns their row indices followed by their partners':
    the previous token (`"adjacent"`) or a uniformly random earlier token of the same document (`"random_past"`).
    Explained in chapters/temporal-sae/01_theory.md.
    """
    check_choice("partner", partner, PARTNERS)
    check_int("doc_len", doc_len, 2)

    def batches(step, g):
        d = torch.randint(n_docs, (n_pairs,), generator=g)
        t = torch.randint(1, doc_len, (n_pairs,), generator=g)
        if partner == "adjacent":
            p = t - 1
        else:
            p = (torch.rand(n_pairs, generator=g) * t).long()
        return torch.cat([d * doc_len + t, d * doc_len + p])

    return batches


def train_tsae(acts: torch.Tensor, doc_len: int, steps: int, *, kind: str = "tsae", n_latents: int = 512, k: int = 8,
               high_frac: float = 0.2, alpha: float = 1.0, temperature: float = 0.1, reading: str = "pre",
               partner: str = "adjacent", n_pairs: int = 512, lr: float = 1e-3, aux_coef: float = 1 / 32,
               seed: int = 0):
    """Train one SAE of the chapter on `acts` (n_docs * doc_len, d), document-major. Returns (sae, history).

    `kind`: "batchtopk" (one prefix, uniform batches of 2 * n_pairs tokens), "matryoshka" (prefixes (h, m), uniform
    batches) or "tsae" (prefixes (h, m), paired batches, plus alpha * contrastive loss; alpha = 0 is the null
    control). h = round(high_frac * n_latents). Training runs on one thread (these matrices are small: more threads
    only wait on each other, and on a busy machine much slower). Explained in chapters/temporal-sae/01_theory.
    """
    check_choice("kind", kind, ("batchtopk", "matryoshka", "tsae"))
    if acts.shape[0] % doc_len:
        raise ValueError(f"acts has {acts.shape[0]} rows, not a multiple of doc_len={doc_len}")
    check_between("high_frac", high_frac, 0, 1)
    h = max(1, round(high_frac * n_latents))
    prefixes = None if kind == "batchtopk" else (h, n_latents)
    sae = SAE(acts.shape[1], n_latents, k, activation="batchtopk", prefixes=prefixes, seed=seed)
    if kind == "tsae":
        batches = pair_batches(acts.shape[0] // doc_len, doc_len, n_pairs, partner)
        extra = temporal_loss(alpha, temperature, reading, h)
    else:
        batches, extra = None, None
    with thread_limit(1):          # matrices this small train fastest on one thread, and alike on every machine
        hist = train_sae(sae, acts, steps, batch_size=2 * n_pairs, lr=lr, aux_coef=aux_coef, batches=batches,
                         extra_loss=extra, seed=seed)
    return sae, hist


# ---------------------------------------------------------------------- the language model
LM_CONFIG = dict(max_len=128, d_model=64, n_layers=2, n_heads=4)


def train_language_model(steps: int = 2000, batch_docs: int = 32, lr: float = 3e-3, seed: int = 0,
                         path=None, warmup: int = 100):
    """Train the book's transformer (2 layers, d=64, 4 heads, context 128) on fresh documents of the toy language.

    Every step draws `batch_docs` new documents (seeds 10^6 + seed * 10^5 + step, disjoint from evaluation corpora
    made with small seeds). If `path` is given the model is saved there with its provenance. Returns (model, history).
    Explained in chapters/temporal-sae/02_experiments; `scale="full"` reruns it.
    """
    from ..nn import Transformer, TransformerConfig, save_checkpoint, train_lm

    vocab_size = make_corpus(n_docs=1).vocab.size
    torch.manual_seed(seed)
    model = Transformer(TransformerConfig(vocab_size=vocab_size, **LM_CONFIG))

    def batches(step):
        c = make_corpus(n_docs=batch_docs, doc_len=LM_CONFIG["max_len"], seed=10**6 + seed * 10**5 + step)
        return torch.as_tensor(c.tokens)

    hist = train_lm(model, batches, steps, lr=lr, warmup=warmup)
    if path is not None:
        save_checkpoint(model, path, command=f"repro.temporal_sae.train_language_model(steps={steps}, "
                        f"batch_docs={batch_docs}, lr={lr}, seed={seed}, warmup={warmup})", seed=seed,
                        steps=steps, seconds=round(hist["seconds"], 1), final_loss=float(np.mean(hist["loss"][-50:])))
    return model, hist


@torch.no_grad()
def activations(model, corpus: Corpus, layer: int = 2, chunk: int = 64) -> torch.Tensor:
    """The residual stream after block `layer` for every token of `corpus`: (n_docs * doc_len, d_model).

    Explained in chapters/temporal-sae/02_experiments.md.
    """
    toks = torch.as_tensor(corpus.tokens)
    out = [model(toks[i:i + chunk]).residuals[layer] for i in range(0, toks.shape[0], chunk)]
    x = torch.cat(out)
    return x.reshape(-1, x.shape[-1])


# ---------------------------------------------------------------------- evaluation
def codes(sae: SAE, acts: torch.Tensor) -> np.ndarray:
    """The sparse codes of every row of `acts` (eval mode: BatchTopK's learned threshold), as numpy.

    Explained in chapters/temporal-sae/02_experiments.md.
    """
    return encode_all(sae, acts)[0].numpy()


def probe_accuracy(features: np.ndarray, labels: np.ndarray, train: np.ndarray, C: float = 1.0,
                   max_iter: int = 300) -> float:
    """Test accuracy of a multinomial logistic-regression probe (scikit-learn) trained on rows where `train`.

    Features are standardised on the training rows. Constant features are dropped.
    Explained in chapters/temporal-sae/02_experiments.md.
    """
    return float(probe_hits(features, labels, train, C, max_iter).mean())


def probe_hits(features: np.ndarray, labels: np.ndarray, train: np.ndarray, C: float = 1.0,
               max_iter: int = 300) -> np.ndarray:
    """Whether the probe of `probe_accuracy` is right on each test row (rows where not `train`, in order): booleans,
    the per-token values behind the accuracy, for a paired interval. Explained in chapters/temporal-sae/02_experiments.md.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.exceptions import ConvergenceWarning

    features = np.asarray(features, dtype=np.float64)
    train = np.asarray(train, dtype=bool)
    if features.shape[0] != len(labels) or len(train) != len(labels):
        raise ValueError("features, labels and train must have the same number of rows")
    mu = features[train].mean(0)
    sd = features[train].std(0)
    keep = sd > 0
    z = (features[:, keep] - mu[keep]) / sd[keep]
    clf = LogisticRegression(C=C, max_iter=max_iter)
    with warnings.catch_warnings(), thread_limit(1, torch_threads=False):   # one BLAS thread: faster on shared CPUs
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(z[train], labels[train])
    return clf.predict(z[~train]) == labels[~train]


def sparse_latents(features: np.ndarray, labels: np.ndarray, train: np.ndarray, k: int) -> np.ndarray:
    """The latents a k-sparse probe reads: for each class, the k columns whose mean on the class's training rows
    differs most (in absolute value) from their mean on the other training rows; the union over classes, sorted.

    This is how the ICLR paper picks the latents of its sparse probes (by the difference of class means); the
    per-class union for a multi-class label is our reading of it. Explained in chapters/temporal-sae/02_experiments.md.
    """
    check_int("k", k)
    features = np.asarray(features, dtype=np.float64)
    train = np.asarray(train, dtype=bool)
    labels = np.asarray(labels)
    if features.shape[0] != len(labels) or len(train) != len(labels):
        raise ValueError("features, labels and train must have the same number of rows")
    f, y = features[train], labels[train]
    picked = set()
    for c in np.unique(y):
        inside = y == c
        if inside.all():
            continue
        diff = np.abs(f[inside].mean(0) - f[~inside].mean(0))
        picked.update(np.argsort(-diff, kind="stable")[:k].tolist())
    return np.array(sorted(picked), dtype=np.int64)


def sparse_probe_accuracy(features: np.ndarray, labels: np.ndarray, train: np.ndarray, k: int = 5) -> float:
    """Test accuracy of a logistic-regression probe that reads only the `sparse_latents` (k per class).

    Explained in chapters/temporal-sae/02_experiments.md.
    """
    return float(sparse_probe_hits(features, labels, train, k).mean())


def sparse_probe_hits(features: np.ndarray, labels: np.ndarray, train: np.ndarray, k: int = 5) -> np.ndarray:
    """Whether the k-sparse probe of `sparse_probe_accuracy` is right on each test row: booleans.

    Explained in chapters/temporal-sae/02_experiments.md.
    """
    cols = sparse_latents(features, labels, train, k)
    return probe_hits(np.asarray(features)[:, cols], labels, train)


def adjacent_cosine(z: np.ndarray, doc_len: int) -> float:
    """Mean cosine similarity between the codes of adjacent tokens of the same document (a zero code: cosine 0).

    Explained in chapters/temporal-sae/02_experiments.md.
    """
    z = np.asarray(z, dtype=np.float64).reshape(-1, doc_len, np.shape(z)[-1])
    n = np.linalg.norm(z, axis=-1)
    dots = (z[:, 1:] * z[:, :-1]).sum(-1)
    denom = n[:, 1:] * n[:, :-1]
    return float(np.where(denom > 0, dots / np.where(denom > 0, denom, 1.0), 0.0).mean())


def mutual_information(active: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """I(latent fires; label) in nats for every column of the boolean matrix `active` (N, m).

    Explained in chapters/temporal-sae/02_experiments.md.
    """
    active = np.asarray(active, dtype=bool)
    classes, inv = np.unique(np.asarray(labels), return_inverse=True)
    n = active.shape[0]
    order = np.argsort(inv, kind="stable")
    bounds = np.searchsorted(inv[order], np.arange(len(classes) + 1))
    on = active[order].astype(np.float64)
    on_c = np.add.reduceat(on, bounds[:-1], axis=0).T / n       # (m, C): P(fires, class)
    p_c = np.diff(bounds) / n
    p_on = active.mean(0)[:, None]
    mi = np.zeros(active.shape[1])
    for joint, marg in ((on_c, p_on), (p_c[None, :] - on_c, 1 - p_on)):
        with np.errstate(divide="ignore", invalid="ignore"):
            term = joint * np.log(joint / (marg * p_c[None, :]))
        mi += np.where(joint > 0, term, 0.0).sum(axis=1)
    return mi


def latent_labels(z: np.ndarray, labels: dict) -> tuple[np.ndarray, np.ndarray]:
    """For every latent that fires: which named label it shares most mutual information with.

    `labels`: name -> (N,) label array. Returns (names of the winning label per live latent, live-latent indices).
    Explained in chapters/temporal-sae/02_experiments.md.
    """
    active = np.asarray(z) != 0
    live = np.flatnonzero(active.any(0))
    names = list(labels)
    mi = np.stack([mutual_information(active[:, live], labels[k]) for k in names])
    return np.array(names)[mi.argmax(0)], live


def standardize(acts: torch.Tensor) -> torch.Tensor:
    """Centre the activations and scale them so that the mean squared norm of a row is d (the SAEs' input).

    Explained in chapters/temporal-sae/02_experiments.md.
    """
    x = acts - acts.mean(0)
    return x / x.pow(2).sum(1).mean().sqrt() * acts.shape[1] ** 0.5


def probe_splits(corpus: Corpus, n_tokens: int = 2000, n_context_docs: int = 32, seed: int = 0) -> dict:
    """Which tokens train and test the probes (row indices into the flattened corpus).

    Topic and syntactic state: `n_tokens` training tokens from the first half of the documents and `n_tokens` test
    tokens from the second half (held-out documents). Document identity ("context"): every token of the first
    `n_context_docs` documents, half of them (at random) for training, half for testing.
    Explained in chapters/temporal-sae/02_experiments.md.
    """
    doc = corpus.doc.ravel()
    n_docs = corpus.tokens.shape[0]
    if n_context_docs > n_docs or 2 * n_tokens > doc.size:
        raise ValueError("n_tokens or n_context_docs is too large for this corpus")
    rng = np.random.default_rng(seed)
    first = doc < n_docs // 2
    tr = rng.choice(np.flatnonzero(first), n_tokens, replace=False)
    te = rng.choice(np.flatnonzero(~first), n_tokens, replace=False)
    ctx = np.flatnonzero(doc < n_context_docs)
    ctx_train = rng.random(ctx.size) < 0.5
    return {"rows": np.concatenate([tr, te]), "train": np.arange(2 * n_tokens) < n_tokens,
            "ctx_rows": ctx, "ctx_train": ctx_train}


def probe_suite(features, corpus: Corpus, splits: dict, k: int | None = None) -> dict:
    """Probe accuracies for topic (semantics), HMM state (syntax) and document id (context) on `features` (N, .).

    `k=None` probes every column; an integer `k` gives the k-sparse probe (`sparse_probe_accuracy`).
    Explained in chapters/temporal-sae/02_experiments.md.
    """
    f = np.asarray(features)
    rows, ctx = splits["rows"], splits["ctx_rows"]

    def acc(x, y, train):
        return probe_accuracy(x, y, train) if k is None else sparse_probe_accuracy(x, y, train, k)

    return {"topic": acc(f[rows], corpus.topic.ravel()[rows], splits["train"]),
            "state": acc(f[rows], corpus.state.ravel()[rows], splits["train"]),
            "context": acc(f[ctx], corpus.doc.ravel()[ctx], splits["ctx_train"])}


def saelens_batchtopk(acts: torch.Tensor, steps: int, n_latents: int = 512, k: int = 8, batch_size: int = 512,
                      lr: float = 1e-3, aux_coef: float = 1 / 32, seed: int = 0):
    """The peer: SAELens's BatchTopK SAE trained by its own `SAETrainer` on rows of `acts`, our batch size and lr.

    Returns (codes (N, m) as numpy, reconstructions (N, d) tensor, seconds spent in `fit`). SAELens's progress bar is
    swallowed so that it leaves nothing in the published page.
    Explained in chapters/temporal-sae/02_experiments.md.
    """
    import contextlib
    import io

    from sae_lens import BatchTopKTrainingSAE, BatchTopKTrainingSAEConfig
    from sae_lens.config import SAETrainerConfig
    from sae_lens.training.sae_trainer import SAETrainer

    torch.manual_seed(seed)
    cfg = BatchTopKTrainingSAEConfig(d_in=acts.shape[1], d_sae=n_latents, k=k, aux_loss_coefficient=aux_coef,
                                     dtype="float32", device="cpu")
    sae = BatchTopKTrainingSAE(cfg)
    g = torch.Generator().manual_seed(seed)

    def provider():
        while True:
            yield acts[torch.randint(acts.shape[0], (batch_size,), generator=g)]

    tcfg = SAETrainerConfig(total_training_samples=steps * batch_size, train_batch_size_samples=batch_size, lr=lr,
                            lr_end=lr, device="cpu")
    with stopwatch() as watch, contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings(), thread_limit(1):
        warnings.simplefilter("ignore")
        trained = SAETrainer(cfg=tcfg, sae=sae, data_provider=provider()).fit()
    trained.eval()
    with torch.no_grad():
        z = trained.encode(acts)
        recon = trained.decode(z)
    return z.numpy(), recon, watch.seconds


def ship(seed: int | None = None) -> list:
    """Remake the chapter's shipped language model, ``data/temporal-sae/lm.pt`` (`python -m repro.book ship
    temporal-sae`): `train_language_model` with the chapter's settings (2,000 steps, seed 0), which writes the
    checkpoint and its provenance. Explained in chapters/temporal-sae/02_experiments.md."""
    from .. import DATA_DIR

    if seed is not None:
        raise ValueError("temporal-sae ships one language model (seed 0), not one per seed: run it without --seed")
    path = DATA_DIR / "temporal-sae" / "lm.pt"
    train_language_model(steps=2000, batch_docs=32, lr=3e-3, seed=0, warmup=100, path=path)
    return [path]
