"""Unit tests of repro.transferability_benchmarks (chapters/transferability-benchmarks): metrics against cases with
known answers, LogME against the direct evidence, weighted tau against scipy, fidelity, rankers, the world, the
zoo, validation, and a small end-to-end smoke test."""
import numpy as np
import pytest
from scipy.stats import weightedtau

from repro import transferability_benchmarks as tb


def gaussian_models(seed=0, n=600, d=12, c=4, seps=(0.4, 0.8, 1.2, 1.8, 2.6)):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    centres = rng.standard_normal((c, d))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    out = []
    for s in seps:
        F = s * centres[y] + 0.5 * rng.standard_normal((n, d))
        logits = -((F[:, None, :] - s * centres[None]) ** 2).sum(-1)
        P = np.exp(logits - logits.max(1, keepdims=True))
        out.append((F, P / P.sum(1, keepdims=True)))
    return y, np.array(seps), out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_four_metrics_rank_gaussian_models_perfectly(seed):
    y, seps, models = gaussian_models(seed)
    for name, fn, uses_p in [("LogME", tb.logme, False), ("H-score", tb.hscore, False), ("LEEP", tb.leep, True),
                             ("GBC", tb.gbc, False)]:
        scores = [fn(P if uses_p else F, y) for F, P in models]
        assert tb.tau_w(seps, np.array(scores)) == pytest.approx(1.0), name


def test_logme_equals_direct_evidence_and_is_a_maximum():
    y, _, models = gaussian_models(3)
    F, _ = models[2]
    score, params = tb.logme(F, y, return_params=True)
    direct = np.mean([tb.logme_evidence(F, (y == c).astype(float), *params[c]) for c in range(len(params))])
    assert abs(score - direct) < 1e-6
    a, b = params[1]
    t = (y == 1).astype(float)
    best = tb.logme_evidence(F, t, a, b)
    for fa in (0.7, 1.4):
        for fb in (0.7, 1.4):
            assert tb.logme_evidence(F, t, a * fa, b * fb) < best


def test_logme_with_more_features_than_examples():
    rng = np.random.default_rng(0)
    F, y = rng.standard_normal((30, 50)), rng.integers(0, 3, 30)
    score, params = tb.logme(F, y, return_params=True)
    direct = np.mean([tb.logme_evidence(F, (y == c).astype(float), *params[c]) for c in range(3)])
    assert abs(score - direct) < 1e-6


def test_hscore_and_leep_and_nce_known_values():
    y = np.array([0, 0, 1, 1])
    F = np.array([[1.0], [1.0], [-1.0], [-1.0]])
    assert tb.hscore(F, y, ridge=0) == pytest.approx(1.0)       # all variance is between classes
    P = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    assert tb.leep(P, y) == pytest.approx(0.0, abs=1e-9)         # the source label determines the target label
    assert tb.nce(P, y) == pytest.approx(0.0, abs=1e-12)
    Pu = np.full((4, 2), 0.5)
    assert tb.leep(Pu, y) == pytest.approx(np.log(0.5))          # an uninformative source: log of the prior


def test_transrate_and_gbc_prefer_separated_classes():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 300)
    centres = np.eye(3) * 3
    sep = centres[y] + rng.standard_normal((300, 3)) * 0.3
    mixed = rng.standard_normal((300, 3))
    assert tb.transrate(sep, y) > tb.transrate(mixed, y)
    assert tb.gbc(sep, y) > tb.gbc(mixed, y)
    assert tb.nleep(sep, y) > tb.nleep(mixed, y)


def test_weighted_tau_matches_scipy_and_fidelity_is_pearson():
    rng = np.random.default_rng(0)
    for _ in range(5):
        G, T = rng.random(10), rng.random(10)
        assert tb.tau_w_direct(G, T) == pytest.approx(weightedtau(G, T).statistic, abs=1e-12)
        assert tb.tau_w(G, T) == pytest.approx(weightedtau(G, T).statistic)
        assert tb.fidelity(G, T) == pytest.approx(np.corrcoef(G, T)[0, 1], abs=1e-12)
    assert tb.tau_w(np.arange(5.0), np.arange(5.0)) == pytest.approx(1.0)
    assert tb.tau_w(np.arange(5.0), -np.arange(5.0)) == pytest.approx(-1.0)


def test_static_rankers_and_ranks():
    assert list(tb.static_size(3)) == [3, 2, 1]
    acc = np.array([[0.9, 0.8, 0.7], [0.1, 0.2, 0.3]])
    assert list(tb.static_history(acc, 0)) == pytest.approx([0.75, 0.25])
    assert tb.rank_matrix(acc).tolist() == [[1, 1, 1], [2, 2, 2]]


def test_tasks_are_deterministic_and_well_formed():
    for task in [*tb.SOURCES, *tb.TARGETS]:
        X, y = tb.make_task(task, 40, 5)
        X2, y2 = tb.make_task(task, 40, 5)
        assert X.shape == (40, 16, 16) and X.dtype == np.float32 and 0 <= X.min() and X.max() <= 1
        assert np.array_equal(X, X2) and np.array_equal(y, y2)


def test_zoo_models_have_features_and_similar_sizes_in_zoo_b():
    import torch

    for family, width, source in tb.zoo_a_specs() + tb.zoo_b_specs():
        net = tb.build(family, width, source)
        x = torch.rand(3, 16, 16)
        assert net.features(x).shape == (3, net.feat_dim)
        assert net(x).shape == (3, tb.N_CLASSES[source])
    sizes = [tb.n_params(tb.build(*s)) for s in tb.zoo_b_specs()]
    assert max(sizes) / min(sizes) < 4


def test_validation_names_the_argument():
    with pytest.raises(ValueError, match="task"):
        tb.make_task("S9", 10, 0)
    with pytest.raises(ValueError, match="n"):
        tb.make_task("S1", 0, 0)
    with pytest.raises(ValueError, match="y"):
        tb.logme(np.zeros((4, 2)), np.array([0, 1]))
    with pytest.raises(ValueError, match="P"):
        tb.leep(np.full((4, 2), 0.3), np.array([0, 0, 1, 1]))
    with pytest.raises(ValueError, match="G and T"):
        tb.tau_w([1.0], [1.0])
    with pytest.raises(ValueError, match="zoo"):
        tb.run_zoo("C", 0)
    with pytest.raises(ValueError, match="family"):
        tb.build("Transformer", 4, "S1")
    with pytest.raises(ValueError, match="fraction"):
        tb.probe_subset_accuracy(np.random.default_rng(0).random((20, 2)), np.arange(20) % 2, fraction=1.5)


def test_pretrain_and_finetune_smoke():
    import torch

    models = tb.pretrain([("CNN", 2, "S2"), ("MLP", 2, "S2")], n_source=200, steps=3, seed=0)
    assert len(models) == 2 and all(0 <= m.source_acc <= 1 for m in models)
    X, y = tb.make_task("orientation", 60, 0)
    X, y = torch.from_numpy(X), torch.from_numpy(y)
    acc = tb.finetune_accuracy(models[0], X[:40], y[:40], X[40:], y[40:], epochs=1, seed=0)
    assert 0 <= acc <= 1


def test_task_copy_equals_make_task_and_is_a_fresh_copy():
    X, y = tb.images.task_copy("orientation", 30, 4)
    X0, y0 = tb.make_task("orientation", 30, 4)
    assert np.array_equal(X, X0) and np.array_equal(y, y0)
    X[:] = 0                                        # a caller may change its copy without touching the cache
    X2, _ = tb.images.task_copy("orientation", 30, 4)
    assert np.array_equal(X2, X0) and X2.flags.writeable


def test_features_once_give_the_softmax_of_a_second_forward_pass():
    import torch

    from repro.transferability_benchmarks.experiment import _features

    torch.manual_seed(0)
    X = torch.rand(7, 16, 16)
    for family, width, source in [("CNN", 2, "S2"), ("Mixer", 8, "S3"), ("MLP", 2, "S1")]:
        net = tb.build(family, width, source).eval()
        for batch in (3, 1000):                     # the same chunks as the two forward passes it replaces
            F, P = _features(net, X, batch=batch)
            with torch.no_grad():
                chunks = [X[i:i + batch] for i in range(0, len(X), batch)]
                assert np.array_equal(F, torch.cat([net.features(c) for c in chunks]).double().numpy())
                assert np.array_equal(P, torch.cat([torch.softmax(net(c), 1) for c in chunks]).double().numpy())
            F2, P2 = _features(net, X, batch=batch, probs=False)
            assert np.array_equal(F2, F) and P2 is None


def test_knn_accuracy_equals_cross_val_score():
    from sklearn.model_selection import cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    y, _, models = gaussian_models(4, n=150)
    for F, _ in models[:3]:
        Z = (F - F.mean(0)) / (F.std(0) + 1e-6)
        assert tb.knn_accuracy(F, y) == float(cross_val_score(KNeighborsClassifier(5), Z, y, cv=3).mean())
