"""Unit tests of repro.flexhinm (chapters/flexhinm): patterns and the density identity, permutations, gates,
validation, and a short training smoke test."""
import numpy as np
import pytest
import torch

from repro import flexhinm as fh


@pytest.fixture(scope="module")
def S():
    return fh.synthetic_layer(32, 64, row_sigma=1.0, col_sigma=1.0, seed=0) ** 2


# ------------------------------------------------------------------ patterns and the density identity

def test_nm_mask_known_answer():
    S = np.array([[1.0, 4.0, 2.0, 3.0, 0.0, 0.5, 9.0, 0.1]])
    np.testing.assert_array_equal(fh.nm_mask(S, 2, 4), [[False, True, False, True, False, True, True, False]])
    np.testing.assert_array_equal(fh.nm_mask(S, 1, 4), [[False, True, False, False, False, False, True, False]])


def test_unstructured_and_vector_masks_known_answer():
    S = np.array([[1.0, 5.0], [4.0, 2.0]])
    np.testing.assert_array_equal(fh.unstructured_mask(S, 0.5), [[False, True], [True, False]])
    # one tile of two rows: column sums 5 and 7, so column 1 stays whole
    np.testing.assert_array_equal(fh.vector_mask(S, 0.5, 2), [[False, True], [False, True]])


@pytest.mark.parametrize("I", [64, 128])
@pytest.mark.parametrize("s", [0.75, 0.875, 0.9375])
def test_density_identity_and_feasible_range(I, s):
    counts = fh.dense_counts(I, s)
    assert counts[0] == max(0, int(round(I * (1 - 2 * s))))          # HiNM end (rho_d = 0 when s >= 1/2)
    assert counts[-1] == int(round(I * (1 - s)))                      # pure-vector end, rho_d = 1 - s
    for n_d in counts:
        rho_d = n_d / I
        rho_nm = 2 * (1 - s - rho_d)
        rho_p = 2 * s - 1 + rho_d
        assert max(0.0, 1 - 2 * s) - 1e-12 <= rho_d <= 1 - s + 1e-12
        assert rho_d + rho_nm + rho_p == pytest.approx(1.0)
        assert rho_d + rho_nm / 2 == pytest.approx(1 - s)


@pytest.mark.parametrize("s", [0.75, 0.875, 0.9375])
def test_hierarchical_masks_valid_and_exact(S, s):
    for n_d in fh.dense_counts(S.shape[1], s):
        lay = fh.hier_layout(S, s, 16, n_d)
        mask = fh.layout_mask(S, lay)
        assert fh.pattern_violations(mask, lay) == 0
        assert mask.mean() == pytest.approx(1 - s, abs=1e-12)
        # every kept 2:4 group keeps exactly two per row
        T = mask.reshape(-1, 16, S.shape[1])
        for t in range(T.shape[0]):
            if lay.groups[t].size:
                assert np.all(T[t][:, lay.groups[t]].sum(-1) == 2)


def test_pattern_violations_detects_a_broken_mask(S):
    lay = fh.hier_layout(S, 0.75, 16, 0)
    mask = fh.layout_mask(S, lay)
    g = lay.groups[0, 0]
    mask[0, g] = True                                                # four of four in a 2:4 group
    assert fh.pattern_violations(mask, lay) >= 1


def test_flexhinm_search_never_worse_than_hinm_and_below_unstructured(S):
    n_d, costs = fh.best_dense_count(S, 0.75, 16)
    assert costs[n_d] <= costs[0]
    flex = fh.retained(S, fh.layout_mask(S, fh.hier_layout(S, 0.75, 16, n_d)))
    assert fh.retained(S, fh.unstructured_mask(S, 0.25)) >= flex - 1e-12


def test_layout_cost_matches_tile_costs(S):
    lay = fh.hier_layout(S, 0.875, 16, 0)
    n_nm = lay.groups.shape[1] * 4
    total = fh.tile_costs(S.reshape(-1, 16, S.shape[1]), 0, n_nm).sum()
    assert fh.layout_cost(S, lay) == pytest.approx(total)


# ------------------------------------------------------------------ permutations

def test_permute_hidden_preserves_the_function():
    rng = np.random.default_rng(1)
    W = [rng.standard_normal((32, 8)), rng.standard_normal((16, 32)), rng.standard_normal((4, 16))]
    b = [rng.standard_normal(32), rng.standard_normal(16), rng.standard_normal(4)]
    x = rng.standard_normal((50, 8))

    def f(W, b):
        h = x
        for i, (w, c) in enumerate(zip(W, b)):
            h = h @ w.T + c
            h = np.maximum(h, 0) if i < len(W) - 1 else h
        return h

    W2, b2 = fh.permute_hidden(W, b, 0, rng.permutation(32))
    W3, b3 = fh.permute_hidden(W2, b2, 1, rng.permutation(16))
    assert np.abs(f(W, b) - f(W3, b3)).max() < 1e-10
    assert not np.allclose(W[0], W3[0])


def test_balanced_kmeans_sizes_and_separated_clusters():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(c, 0.05, (5, 2)) for c in ([0, 0], [3, 0], [0, 3])])
    labels = fh.balanced_kmeans(X, 3, iters=5, seed=0)
    assert np.bincount(labels, minlength=3).tolist() == [5, 5, 5]
    for c in range(3):                                               # each true group in one cluster
        assert len(set(labels[5 * c:5 * c + 5])) == 1


def test_gyro_output_and_input_never_raise_the_cost(S):
    res = fh.gyro_output(S, 0.75, 16, 0, max_fail=2, seed=0)
    assert np.all(np.diff(res.trace) <= 1e-12)
    assert sorted(res.perm.tolist()) == list(range(S.shape[0]))
    Sp = S[res.perm]
    lay0 = fh.hier_layout(Sp, 0.75, 16, 0)
    lay, trace = fh.gyro_input(Sp, lay0, sweeps=2)
    assert np.all(np.diff(trace) <= 1e-9)
    assert fh.layout_cost(Sp, lay) <= fh.layout_cost(Sp, lay0) + 1e-9
    assert fh.pattern_violations(fh.layout_mask(Sp, lay), lay) == 0


def test_prune_model_gp_compensates_the_permutation():
    rng = np.random.default_rng(2)
    W = [rng.standard_normal((32, 16)), rng.standard_normal((32, 32)), rng.standard_normal((4, 32))]
    b = [rng.standard_normal(32), rng.standard_normal(32), rng.standard_normal(4)]
    powers = [np.ones(16), np.ones(32)]
    pm = fh.prune_model(W, b, powers, "flexhinm-gp", 0.75, v=16, gp=dict(max_fail=1, sweeps=1))
    x = torch.as_tensor(rng.standard_normal((1, 20, 16)))
    t = lambda ws: [torch.as_tensor(w)[None] for w in ws]
    assert float((fh.forward(t(W), t(b), x) - fh.forward(t(pm.weights), t(pm.biases), x)).abs().max()) < 1e-10
    for mask in pm.masks:
        assert mask.mean() == pytest.approx(0.25)


# ------------------------------------------------------------------ Hard Concrete gates

def test_expected_l0_closed_form_against_monte_carlo():
    la = torch.tensor([-3.0, -1.0, 0.0, 1.0, 3.0], dtype=torch.float64)
    g = torch.Generator().manual_seed(0)
    z = torch.stack([fh.hard_concrete_sample(la, generator=g) for _ in range(20000)])
    np.testing.assert_allclose((z > 0).double().mean(0).numpy(), fh.expected_l0(la).numpy(), atol=0.015)
    assert float(z.min()) == 0.0 and float(z.max()) == 1.0


def test_gate_known_values():
    # log_alpha = 0: P(open) = sigmoid(-beta log(0.1/1.1)); test-time gate = 0.5 * 1.2 - 0.1 = 0.5
    la = torch.zeros(1, dtype=torch.float64)
    assert float(fh.expected_l0(la)) == pytest.approx(1 / (1 + np.exp(fh.BETA * np.log(0.1 / 1.1))))
    assert float(fh.deterministic_gate(la)) == pytest.approx(0.5)
    assert float(fh.deterministic_gate(torch.tensor([20.0]))) == 1.0
    assert float(fh.deterministic_gate(torch.tensor([-20.0]))) == 0.0


def test_hc_project_gives_a_valid_24_mask(S):
    lay = fh.hier_layout(S, 0.875, 16, 0)
    la = fh.hc_init_log_alpha(S, lay)
    mask = fh.hc_project(la, lay)
    assert fh.pattern_violations(mask, lay) == 0
    np.testing.assert_array_equal(mask, fh.layout_mask(S, lay))     # initial gates rank like the saliency
    ids = fh.hc_group_ids(S.shape, lay)
    assert ids.max() + 1 == S.shape[0] * lay.groups.shape[1]
    assert np.all(np.bincount(ids[ids >= 0]) == 4)


# ------------------------------------------------------------------ peers

def test_our_masks_equal_torch_peers():
    W = np.random.default_rng(3).standard_normal((16, 32))
    ao, _ = fh.ao_24_mask(W)
    np.testing.assert_array_equal(fh.nm_mask(W ** 2, 2, 4), ao)
    l1, _ = fh.torch_l1_unstructured_mask(W, 0.25)
    np.testing.assert_array_equal(fh.unstructured_mask(W ** 2, 0.25), l1)


# ------------------------------------------------------------------ validation

@pytest.mark.parametrize("call, name", [
    (lambda: fh.nm_mask(np.ones((2, 6)), 2, 4), "m"),
    (lambda: fh.nm_mask(np.ones((2, 4)), 5, 4), "n"),
    (lambda: fh.unstructured_mask(np.ones((2, 4)), 1.5), "density"),
    (lambda: fh.unstructured_mask(-np.ones((2, 4)), 0.5), "S"),
    (lambda: fh.vector_mask(np.ones((3, 4)), 0.5, 2), "v"),
    (lambda: fh.dense_counts(64, 1.0), "sparsity"),
    (lambda: fh.hier_layout(np.ones((16, 64)), 0.75, 16, 3), "n_dense"),
    (lambda: fh.balanced_kmeans(np.ones((5, 2)), 2), "k"),
    (lambda: fh.permute_hidden([np.ones((2, 2)), np.ones((1, 2))], [np.ones(2), np.ones(1)], 0, [0, 0]), "perm"),
    (lambda: fh.permute_hidden([np.ones((2, 2))], [np.ones(2)], 0, [0, 1]), "layer"),
    (lambda: fh.prune_layer(np.ones((16, 64)), "magic", 0.75), "method"),
    (lambda: fh.synthetic_layer(0, 4), "out_features"),
    (lambda: fh.expected_l0(np.zeros(3)), "log_alpha"),
    (lambda: fh.train_mlp(*fh.init_mlp([0]), torch.zeros(1, 4, 64), torch.zeros(1, 4, dtype=torch.long),
                          steps=1, lr=-1.0), "lr"),
    (lambda: fh.digits_splits([-1]), "seeds"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ------------------------------------------------------------------ training smoke test

def test_short_digits_experiment_smoke():
    ex = fh.digits_experiment([0, 1], [0.75], pretrain_steps=60, finetune_steps=20, v=16,
                              gp=dict(max_fail=1, sweeps=1), hc=dict(ramp_frac=0.5))
    assert ex.dense_acc.shape == (2,) and ex.dense_acc.min() > 0.6      # better than chance after 60 steps
    for m in list(fh.METHODS) + ["flexhinm-gp-hc"]:
        assert ex.tuned[(m, 0.75)].shape == (2,)
        if m in fh.METHODS:                 # per-image hits, whose mean over the images is the accuracy
            hits = ex.tuned_correct[(m, 0.75)]
            assert hits.dtype == bool and hits.shape[0] == 2
            np.testing.assert_allclose(hits.mean(1), ex.tuned[(m, 0.75)], atol=1e-6)
        for pm in ex.pruned[(m, 0.75)]:
            for mask in pm.masks:
                assert mask.mean() == pytest.approx(0.25)
    for pm in ex.pruned[("flexhinm-gp-hc", 0.75)]:
        for mask, lay in zip(pm.masks, pm.layouts):
            assert fh.pattern_violations(mask, lay) == 0


def test_twin_models_are_trained_once_with_the_same_results():
    from repro.flexhinm.experiment import _twins
    from repro.flexhinm.mlp import digits_splits, train_mlp
    from repro.flexhinm.prune import PrunedModel

    rng = np.random.default_rng(0)
    W = [rng.standard_normal((8, 4)).astype(np.float32), rng.standard_normal((3, 8)).astype(np.float32)]
    b = [np.zeros(8, np.float32), np.zeros(3, np.float32)]
    mask = [rng.random((8, 4)) < 0.5]
    pm = lambda w: PrunedModel(weights=[x.copy() for x in w], biases=[x.copy() for x in b], masks=[m.copy() for m in mask])
    other = [W[0].copy(), W[1].copy()]
    other[1][0, 0] = np.nextafter(other[1][0, 0], np.float32(np.inf))           # one bit apart
    pruned = {"a": [pm(W)], "b": [pm(other)], "c": [pm(W)], "d": [pm(other)]}
    assert _twins(pruned, ["a", "b", "c", "d"]) == {"a": "a", "b": "b", "c": "a", "d": "b"}

    # the reason it is safe: a model fine-tuned in a larger batch of models gets the same bits as on its own
    data = digits_splits([0])
    torch.manual_seed(0)
    Ws = [torch.randn(3, 16, 64) * 0.1, torch.randn(3, 10, 16) * 0.1]
    bs = [torch.zeros(3, 16), torch.zeros(3, 10)]
    masks = [(torch.rand(3, 16, 64) < 0.5).float(), None]
    X, y = data.X_train.repeat(3, 1, 1), data.y_train.repeat(3, 1)
    W3, b3 = train_mlp(Ws, bs, X, y, 5, masks=masks, seed=1, share=1)
    W1, b1 = train_mlp([w[1:2] for w in Ws], [x[1:2] for x in bs], X[1:2], y[1:2], 5, masks=[masks[0][1:2], None],
                       seed=1, share=1)
    for a, c in zip(W3 + b3, W1 + b1):
        assert torch.equal(a[1:2], c)

    ex = fh.digits_experiment([0], [0.75], pretrain_steps=30, finetune_steps=5, v=16, gp=dict(max_fail=1, sweeps=1))
    twin = _twins(ex.pruned, [(m, 0.75) for m in fh.METHODS])
    for k, u in twin.items():
        assert np.array_equal(ex.tuned[k], ex.tuned[u]) and np.array_equal(ex.oneshot[k], ex.oneshot[u])
