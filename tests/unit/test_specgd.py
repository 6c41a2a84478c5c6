"""Unit tests of repro.specgd (chapters/specgd): update rules, closed forms, validation, and the trainers."""
import numpy as np
import pytest

from repro import specgd as sg


@pytest.fixture(scope="module")
def small():
    return sg.make_gmm(num_classes=4, dim=20, n_train=2000, imbalance_ratio=10,
                       n_val_per_class=20, n_test_per_class=20, seed=0)


@pytest.fixture(scope="module")
def gradient():
    data = sg.make_gmm(seed=0)
    _, C = sg.moments(data.X_train, data.y_train, data.num_classes)
    return -C                      # the gradient at W_0 = 0


# ------------------------------------------------------------------ update rules

def test_polar_factor_of_a_hand_computable_matrix():
    # G = U diag(3, 1) V^T with U = 90-degree rotation, V = I: the polar factor is that rotation.
    G = np.array([[0.0, -1.0], [3.0, 0.0]])
    np.testing.assert_allclose(sg.polar_factor(G), [[0.0, -1.0], [1.0, 0.0]], atol=1e-12)
    # a diagonal matrix with mixed signs maps to its sign pattern; a zero column stays zero (rank 2 of 3)
    D = np.array([[2.0, 0.0, 0.0], [0.0, -0.5, 0.0]])
    np.testing.assert_allclose(sg.polar_factor(D), [[1.0, 0.0, 0.0], [0.0, -1.0, 0.0]], atol=1e-12)


def test_polar_factor_truncates_to_the_rank():
    u, v = np.array([[0.6], [0.8]]), np.array([[1.0, 0.0, 0.0]])
    P = sg.polar_factor(5.0 * u @ v)          # rank one: U_1 V_1^T, not a full orthogonal map
    np.testing.assert_allclose(P, u @ v, atol=1e-12)


def test_spec_direction_is_batched():
    G = np.random.default_rng(0).standard_normal((3, 4, 6))
    P = sg.spec_direction(G)
    for g, p in zip(G, P):
        np.testing.assert_allclose(p, sg.polar_factor(g), atol=1e-12)
        np.testing.assert_allclose(p @ p.T, np.eye(4), atol=1e-10)


def test_shampoo_without_accumulation_equals_specgd(gradient):
    D = sg.shampoo_direction(gradient, eps=1e-12)
    P = sg.spec_direction(gradient)
    assert np.linalg.norm(D - P) / np.linalg.norm(P) < 1e-4


def test_muon_step_is_close_to_the_polar_factor(gradient):
    M = sg.muon_direction(gradient)
    P = sg.polar_factor(gradient)
    cosine = (M * P).sum() / np.linalg.norm(M) / np.linalg.norm(P)
    assert cosine >= 0.95


def test_ngd_has_unit_frobenius_norm(gradient):
    assert np.isclose(np.linalg.norm(sg.ngd_direction(gradient)), 1.0)


def test_sign_direction_is_entrywise_sign():
    G = np.array([[0.3, -2.0, 0.0], [-1e-9, 5.0, 1.0]])
    np.testing.assert_array_equal(sg.sign_direction(G), [[1, -1, 0], [-1, 1, 1]])


def test_adam_first_full_batch_step_is_a_sign_step(gradient):
    import torch
    p = torch.zeros(gradient.shape, dtype=torch.float64, requires_grad=True)
    opt = sg.make_adam([p], 0.01)
    p.grad = torch.as_tensor(gradient)
    opt.step()
    big = np.abs(gradient) > 1e-4                # away from Adam's eps, the step is lr * sign(G)
    np.testing.assert_allclose(-p.detach().numpy()[big], 0.01 * np.sign(gradient[big]), rtol=1e-3)
    with pytest.raises(ValueError, match="lr"):
        sg.make_adam([p, p], [0.1, 0.2, 0.3])


def test_direction_refuses_the_stateful_method(gradient):
    with pytest.raises(ValueError, match="adam"):
        sg.direction("adam", gradient)


# ------------------------------------------------------------------ closed forms

def test_gd_closed_form_matches_simulation_on_population_moments():
    # With the population moments Sigma = M Pi M^T + sigma^2 I, C = Pi M^T the closed form is exact.
    K, d, mu, sigma, eta = 3, 5, 2.0, 0.5, 0.1
    pi = sg.long_tailed_priors(K, 10.0)
    M = mu * np.eye(d)[:, :K]
    S, C = M @ np.diag(pi) @ M.T + sigma ** 2 * np.eye(d), np.diag(pi) @ M.T
    W, a = np.zeros((K, d)), []
    for _ in range(30):
        W = W - eta * (W @ S - C)
        a.append(sg.components(W, M / mu))
    expected = sg.gd_closed_form(np.arange(1, 31), eta, pi, mu, sigma)
    np.testing.assert_allclose(np.array(a), expected, rtol=1e-10)


def test_spec_closed_form_matches_simulation_on_population_moments():
    K, d, mu, sigma, eta = 3, 5, 2.0, 0.5, 0.01
    pi = sg.long_tailed_priors(K, 10.0)
    M = mu * np.eye(d)[:, :K]
    S, C = M @ np.diag(pi) @ M.T + sigma ** 2 * np.eye(d), np.diag(pi) @ M.T
    _, a_star = sg.gmm_constants(pi, mu, sigma)
    W = np.zeros((K, d))
    steps = int(a_star.min() / eta)                # before the first component saturates
    for _ in range(steps):
        W = W - eta * sg.spec_direction(W @ S - C)
    np.testing.assert_allclose(sg.components(W, M / mu), sg.spec_closed_form([steps], eta, pi, mu, sigma)[0],
                               rtol=1e-10)


def test_population_moments_make_both_closed_forms_exact_for_any_priors():
    rng = np.random.default_rng(3)
    K, d, mu, sigma = 4, 7, 2.0, 0.7
    q, _ = np.linalg.qr(rng.standard_normal((d, K)))
    for pi in sg.prior_sweep(K, seed=1).values():
        S, C = sg.population_moments(pi, mu * q, sigma)
        lam, a_star = sg.gmm_constants(pi, mu, sigma)
        W, a = np.zeros((K, d)), []
        eta = 0.5 / lam.max()
        for _ in range(20):
            W = W - eta * (W @ S - C)
            a.append(sg.components(W, q))
        np.testing.assert_allclose(a, sg.gd_closed_form(np.arange(1, 21), eta, pi, mu, sigma), rtol=1e-9)
    with pytest.raises(ValueError, match="means"):
        sg.population_moments(np.full(3, 1 / 3), q, sigma)


def test_prior_sweep_gives_valid_priors():
    sweep = sg.prior_sweep(6, seed=0)
    assert len(sweep) == 8
    for p in sweep.values():
        assert p.shape == (6,) and np.all(p > 0) and np.isclose(p.sum(), 1)
    np.testing.assert_allclose(sweep["long-tailed, R = 1"], np.full(6, 1 / 6))


def test_balanced_accuracy_closed_form_matches_monte_carlo():
    rng = np.random.default_rng(1)
    K, mu, sigma, a = 3, 1.5, 1.0, np.array([1.0, 0.5, 0.2])
    n = 40_000
    y = rng.integers(0, K, n)
    X = mu * np.eye(K)[y] + sigma * rng.standard_normal((n, K))
    mc = sg.balanced_accuracy(X * a, y, K)
    assert abs(sg.balanced_accuracy_closed_form(a, mu, sigma) - mc) < 0.01


def test_balanced_accuracy_weighs_classes_equally():
    scores = np.array([[1, 0], [1, 0], [1, 0], [0, 1]], float)
    assert sg.balanced_accuracy(scores, np.array([0, 0, 0, 1]), 2) == 1.0
    assert sg.balanced_accuracy(scores, np.array([0, 0, 1, 1]), 2) == 0.75
    # plain accuracy would be 2/4; balanced accuracy averages 1/1 (class 0) and 1/3 (class 1)
    assert np.isclose(sg.balanced_accuracy(scores, np.array([0, 1, 1, 1]), 2), 2 / 3)


# ------------------------------------------------------------------ input validation

@pytest.mark.parametrize("call, word", [
    (lambda: sg.long_tailed_priors(10, 0.5), "imbalance_ratio"),
    (lambda: sg.long_tailed_priors(1, 10), "num_classes"),
    (lambda: sg.make_gmm(num_classes=10, dim=5), "dim"),
    (lambda: sg.make_gmm(mu=-1.0), "mu"),
    (lambda: sg.direction("adamw", np.eye(2)), "gd, ngd, spec, shampoo, muon"),
    (lambda: sg.polar_factor(np.ones(3)), "G must be a matrix"),
    (lambda: sg.shampoo_direction(np.eye(2), eps=0.0), "eps"),
    (lambda: sg.components(np.zeros((3, 4)), np.zeros((3, 4))), "directions"),
    (lambda: sg.gd_closed_form([1, 2], -0.1, [0.5, 0.5], 1.0, 1.0), "eta"),
    (lambda: sg.balanced_accuracy_closed_form([1.0, -1.0], 1.0, 1.0), "positive"),
    (lambda: sg.balanced_accuracy(np.zeros((3, 2)), np.zeros(4, int)), "scores"),
    (lambda: sg.lr_schedule([0.1], 0), "steps"),
    (lambda: sg.moments(np.zeros((3, 2)), np.array([0, 1, 5]), 2), "labels"),
    (lambda: sg.init_deep_linear(0, 3, 4, 4, 0.1), "depth"),
    (lambda: sg.make_optimizer("rmsprop", [], 0.1), "sgd, adam, muon"),
    (lambda: sg.long_tailed_digits(imbalance_ratio=0.9), "imbalance_ratio"),
])
def test_bad_inputs_raise_clear_errors(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_trainers_reject_unknown_methods(small):
    with pytest.raises(ValueError, match="gd, ngd, spec"):
        sg.train_linear(small, "sgd", [0.1], 2)
    with pytest.raises(ValueError, match="gd, spec"):
        sg.train_deep_linear(small, 2, "muon", [0.1], 2)


# ------------------------------------------------------------------ data

def test_make_gmm_is_seeded_and_shaped(small):
    again = sg.make_gmm(num_classes=4, dim=20, n_train=2000, imbalance_ratio=10,
                        n_val_per_class=20, n_test_per_class=20, seed=0)
    np.testing.assert_array_equal(small.X_train, again.X_train)
    assert small.X_train.shape == (small.counts.sum(), 20)
    assert np.isclose(small.counts[0] / small.counts[-1], 10, rtol=0.05)
    np.testing.assert_allclose(small.means.T @ small.means, small.mu ** 2 * np.eye(4), atol=1e-10)
    assert np.all(np.bincount(small.y_test) == 20)


# ------------------------------------------------------------------ trainers run (so the full-scale code cannot rot)

@pytest.mark.parametrize("method", sg.METHODS)
def test_train_linear_runs_every_method(small, method):
    r = sg.train_linear(small, method, [0.001, 0.01], steps=3, directions=small.means / small.mu)
    assert r.val.shape == r.test.shape == (4, 2) and r.components.shape == (4, 2, 4)
    best = sg.best_over_grid(r)
    assert 0 <= best["early"] <= 1 and best["lr"] in (0.001, 0.01)


def test_lr_schedule_is_one_constant_step_per_learning_rate():
    np.testing.assert_allclose(sg.lr_schedule([0.1, 0.2], 3), [[0.1, 0.2]] * 3)
    with pytest.raises(ValueError, match="eta"):
        sg.lr_schedule([0.1, -0.2], 3)


def test_eval_schedule_is_dense_then_sparse():
    ev = sg.eval_schedule(1000, dense=100, total=200)
    assert ev[0] == 0 and ev[-1] == 1000 and np.all(np.diff(ev) > 0)
    np.testing.assert_array_equal(ev[:101], np.arange(101))


def test_specgd_moves_every_component_by_eta_first(small):
    r = sg.train_linear(small, "spec", [0.001], steps=1)
    s = np.linalg.svd(r.weights[0], compute_uv=False)
    np.testing.assert_allclose(s, 0.001, rtol=1e-8)


@pytest.mark.parametrize("depth, method", [(1, "gd"), (2, "spec"), (3, "gd"), (3, "spec")])
def test_train_deep_linear_runs(small, depth, method):
    r = sg.train_deep_linear(small, depth, method, [0.01, 0.1], steps=3, width=8)
    assert r.test.shape == (4, 2) and r.weights.shape == (2, 4, 20)


def test_layer_gradients_match_finite_differences(small):
    S, C = sg.moments(small.X_train, small.y_train, 4)
    layers = [w[0] for w in sg.init_deep_linear(3, 4, 20, 5, 0.5, seed=1)]
    loss = lambda ls: 0.5 * np.trace(sg.product(ls) @ S @ sg.product(ls).T) - np.trace(sg.product(ls) @ C.T)
    grads = sg.layer_gradients(layers, S, C)
    for l in range(3):
        E = np.zeros_like(layers[l]); E[0, 1] = 1e-6
        plus = [w + E if i == l else w for i, w in enumerate(layers)]
        minus = [w - E if i == l else w for i, w in enumerate(layers)]
        assert np.isclose((loss(plus) - loss(minus)) / 2e-6, grads[l][0, 1], rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("optimizer", sg.DIGIT_OPTIMIZERS)
def test_digits_training_runs(optimizer):
    data = sg.long_tailed_digits(imbalance_ratio=20, seed=0)
    assert data.counts.max() / data.counts.min() > 10
    out = sg.train_digits(data, optimizer, 0.01, epochs=1, hidden=16)
    assert out["val"].shape == out["test"].shape == (2,)


def test_digits_benchmark_runs():
    out = sg.digits_benchmark({"sgd": [0.05], "muon": [0.02]}, seeds=[0], epochs=1)
    assert set(out) == {"sgd", "muon"} and out["sgd"].shape == (1,)


def test_class_balanced_loss_matches_the_fast_evaluator_and_weighs_classes_equally():
    from repro.specgd import class_balanced_loss, make_gmm
    from repro.specgd.train import _loss_evaluator
    data = make_gmm(seed=3, n_train=600)
    W = np.random.default_rng(0).standard_normal((2, data.num_classes, data.dim)) * 0.1
    assert np.allclose(_loss_evaluator(data)(W)[1], class_balanced_loss(W, data.X_test, data.y_test, data.num_classes))
    assert np.isclose(class_balanced_loss(np.zeros((data.num_classes, data.dim)), data.X_train, data.y_train,
                                          data.num_classes), 0.5)
    with pytest.raises(ValueError):
        class_balanced_loss(W[:, :3], data.X_test, data.y_test, data.num_classes)


def test_learning_times_gd_learns_the_frequent_class_first_and_spec_the_rare_one():
    from repro.specgd import learning_times, make_gmm
    data = make_gmm(seed=1)
    rare, frequent = int(np.argmin(data.priors)), int(np.argmax(data.priors))
    gd = learning_times(data, 1, "gd", 0.05, 2000)
    spec = learning_times(data, 1, "spec", 0.002, 2000)
    assert np.all(np.isfinite(gd)) and gd[rare] > gd[frequent]
    assert spec[rare] < spec[frequent]
    with pytest.raises(ValueError):
        learning_times(data, 1, "gd", 0.05, 10, fraction=1.5)
