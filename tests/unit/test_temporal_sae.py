"""Unit tests of repro.temporal_sae (chapters/temporal-sae): contrastive loss, pair batches, probes, the trainers."""
import numpy as np
import pytest
import torch

from repro.temporal_sae import make_corpus
from repro.temporal_sae import (activations, adjacent_cosine, contrastive_loss, latent_labels, mutual_information,
                        pair_batches, probe_accuracy, temporal_loss, train_language_model, train_tsae)


def test_contrastive_loss_is_lower_for_identical_pairs_and_symmetric():
    torch.manual_seed(0)
    a = torch.randn(16, 5)
    same = contrastive_loss(a, a, temperature=0.1)
    shuffled = contrastive_loss(a, a[torch.randperm(16)], temperature=0.1)
    assert float(same) < float(shuffled)
    b = torch.randn(16, 5)
    assert float(contrastive_loss(a, b)) == pytest.approx(float(contrastive_loss(b, a)), rel=1e-6)
    # a hand case: two orthogonal pairs, perfectly matched: each CE = log(1 + e^{-1/T})
    e = torch.eye(2)
    assert float(contrastive_loss(e, e, temperature=1.0)) == pytest.approx(2 * np.log(1 + np.exp(-1.0)), rel=1e-6)
    with pytest.raises(ValueError, match="temperature"):
        contrastive_loss(a, a, temperature=0.0)
    with pytest.raises(ValueError, match="z_t"):
        contrastive_loss(a, a[:3])


def test_pair_batches_pick_previous_or_earlier_tokens_of_the_same_document():
    g = torch.Generator().manual_seed(0)
    idx = pair_batches(n_docs=5, doc_len=10, n_pairs=200, partner="adjacent")(0, g)
    t, p = idx[:200], idx[200:]
    assert idx.shape == (400,) and torch.equal(t - 1, p) and (t % 10 >= 1).all()
    idx = pair_batches(5, 10, 200, partner="random_past")(0, g)
    t, p = idx[:200], idx[200:]
    assert torch.equal(t // 10, p // 10) and (p < t).all()
    with pytest.raises(ValueError, match="partner"):
        pair_batches(5, 10, 4, partner="future")


def test_temporal_loss_readings_and_alpha_zero():
    from repro.nn.sae import SAE
    sae = SAE(4, 10, 2, prefixes=(3, 10), seed=0)
    x = torch.randn(8, 4)
    out = sae(x)
    assert float(temporal_loss(0.0)(sae, x, out).detach()) == 0.0
    pre = temporal_loss(1.0, reading="pre")(sae, x, out)
    assert float(pre.detach()) == pytest.approx(float(contrastive_loss(out.pre[:4, :3], out.pre[4:, :3], 0.1).detach()), rel=1e-6)
    post = temporal_loss(2.0, reading="post")(sae, x, out)
    assert float(post.detach()) == pytest.approx(2 * float(contrastive_loss(out.codes[:4, :3], out.codes[4:, :3], 0.1).detach()),
                                        rel=1e-6)
    with pytest.raises(ValueError, match="reading"):
        temporal_loss(1.0, reading="mid")


def test_train_tsae_kinds_and_shapes():
    torch.manual_seed(0)
    acts = torch.randn(8 * 16, 6)
    for kind in ("batchtopk", "matryoshka", "tsae"):
        sae, hist = train_tsae(acts, 16, 5, kind=kind, n_latents=20, k=2, n_pairs=16, alpha=1.0, reading="post")
        assert len(hist["loss"]) == 5 and sae.n_latents == 20
        assert sae.prefixes == ((20,) if kind == "batchtopk" else (4, 20))
        assert (hist["extra"][0] > 0) == (kind == "tsae")
    with pytest.raises(ValueError, match="doc_len"):
        train_tsae(acts[:-1], 16, 1)
    with pytest.raises(ValueError, match="kind"):
        train_tsae(acts, 16, 1, kind="vanilla")


def test_adjacent_cosine_and_mutual_information_hand_cases():
    z = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])     # one document of 4 tokens
    assert adjacent_cosine(z, 4) == pytest.approx((1.0 + 0.0 + 0.0) / 3)
    active = np.array([[1, 0], [1, 1], [0, 0], [0, 1]], dtype=bool)
    labels = np.array([0, 0, 1, 1])
    mi = mutual_information(active, labels)
    assert mi[0] == pytest.approx(np.log(2)) and mi[1] == pytest.approx(0.0, abs=1e-12)
    names, live = latent_labels(active.astype(float), {"topic": labels, "noise": np.array([0, 1, 0, 1])})
    assert list(live) == [0, 1] and names[0] == "topic" and names[1] == "noise"


def test_probe_accuracy_on_separable_data():
    rng = np.random.default_rng(0)
    y = rng.integers(3, size=300)
    X = np.eye(3)[y] * 3 + 0.1 * rng.standard_normal((300, 3))
    train = np.arange(300) < 200
    assert probe_accuracy(X, y, train) == 1.0
    with pytest.raises(ValueError, match="same number of rows"):
        probe_accuracy(X, y[:10], train)


def test_the_language_model_trains_a_few_steps_and_gives_activations(tmp_path):
    from repro.nn import load_checkpoint
    model, hist = train_language_model(steps=3, batch_docs=4, seed=0, path=tmp_path / "lm.pt", warmup=1)
    assert len(hist["loss"]) == 3 and np.isfinite(hist["loss"]).all()
    loaded, prov = load_checkpoint(tmp_path / "lm.pt")
    assert "train_language_model(steps=3" in prov["command"] and prov["seed"] == 0
    corpus = make_corpus(n_docs=3, seed=0)
    acts = activations(loaded, corpus, layer=2)
    assert acts.shape == (3 * 128, 64)


def test_standardize_and_probe_splits():
    from repro.temporal_sae import probe_splits, standardize
    x = standardize(torch.randn(500, 8) * 3 + 1)
    assert torch.allclose(x.mean(0), torch.zeros(8), atol=1e-5)
    assert float(x.pow(2).sum(1).mean()) == pytest.approx(8.0, rel=1e-5)
    corpus = make_corpus(n_docs=10, seed=0)
    sp = probe_splits(corpus, n_tokens=100, n_context_docs=4, seed=0)
    doc = corpus.doc.ravel()
    rows, train = sp["rows"], sp["train"]
    assert len(rows) == 200 and train.sum() == 100
    assert (doc[rows[train]] < 5).all() and (doc[rows[~train]] >= 5).all()      # held-out documents
    assert (doc[sp["ctx_rows"]] < 4).all() and len(sp["ctx_rows"]) == 4 * 128
    with pytest.raises(ValueError, match="too large"):
        probe_splits(corpus, n_tokens=1000)


def test_sparse_latents_pick_the_columns_that_tell_each_class_apart():
    from repro.temporal_sae import sparse_latents, sparse_probe_accuracy

    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 100)
    x = rng.normal(0, 0.1, (300, 20))
    x[y == 0, 4] += 3.0          # one column marks each class
    x[y == 1, 11] += 3.0
    x[y == 2, 17] += 3.0
    train = np.tile([True, False], 150)
    assert sparse_latents(x, y, train, k=1).tolist() == [4, 11, 17]
    assert set(sparse_latents(x, y, train, k=2).tolist()) >= {4, 11, 17}
    assert sparse_probe_accuracy(x, y, train, k=1) == 1.0
    with pytest.raises(ValueError, match="k"):
        sparse_latents(x, y, train, k=0)
    with pytest.raises(ValueError, match="same number of rows"):
        sparse_latents(x[:10], y, train, k=1)


def test_probe_hits_are_the_test_rows_behind_the_accuracy():
    from repro.temporal_sae import probe_hits, sparse_probe_accuracy, sparse_probe_hits

    rng = np.random.default_rng(1)
    y = rng.integers(3, size=400)
    x = np.eye(3)[y] + 0.8 * rng.standard_normal((400, 3))      # noisy: some test rows are missed
    x = np.hstack([x, rng.standard_normal((400, 5))])
    train = np.arange(400) < 250
    hits = probe_hits(x, y, train)
    assert hits.shape == (150,) and hits.dtype == bool and 0.3 < hits.mean() < 1.0
    assert hits.mean() == probe_accuracy(x, y, train)
    sparse = sparse_probe_hits(x, y, train, k=1)
    assert sparse.shape == (150,) and sparse.mean() == sparse_probe_accuracy(x, y, train, k=1)
