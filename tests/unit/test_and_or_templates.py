"""Unit tests of repro.and_or_templates (chapters/and-or-templates): the max-ent fit, block pursuit on planted blocks,
parsing and evidence, the world, features, expansion, validation, and a small end-to-end smoke test."""
import numpy as np
import pytest
from scipy.optimize import brentq

from repro import and_or_templates as ao


@pytest.fixture(scope="module")
def ref():
    rng = np.random.default_rng(0)
    return np.where(rng.random((400, 6)) < 0.05, rng.beta(9, 1, (400, 6)), rng.beta(1, 12, (400, 6)))


def planted(rng, n=60):
    """Terminal 0 in every row, 1-2 in one half, 3-4 in the other, 5 noise."""
    R = rng.beta(1, 12, (n, 6))
    half = np.arange(n) < n // 2
    R[:, 0] = rng.beta(9, 1, n)
    R[half, 1:3] = rng.beta(9, 1, (half.sum(), 2))
    R[~half, 3:5] = rng.beta(9, 1, ((~half).sum(), 2))
    return R, half


# ------------------------------------------------------------------ maximum entropy, one feature

def test_fit_beta_matches_moment_and_brentq(ref):
    rbar = np.array([0.8, 0.5, 0.3, 0.2, 0.1, 0.05])
    beta, logz = ao.fit_beta(rbar, ref)
    np.testing.assert_allclose(ao.tilted_mean(beta, ref), rbar, atol=1e-6)
    b0 = brentq(lambda b: ao.tilted_mean(b, ref[:, :1])[0] - rbar[0], -20, 20)
    assert beta[0] == pytest.approx(b0, abs=1e-6)
    np.testing.assert_allclose(logz, ao.log_z(beta, ref))


def test_gain_is_kl_and_zero_at_the_reference_mean(ref):
    rbar = np.array([0.7, 0.4, 0.2, 0.15, 0.12, 0.09])
    beta, logz = ao.fit_beta(rbar, ref)
    np.testing.assert_allclose(ao.gain(rbar, beta, logz), ao.kl_tilted(beta, ref), atol=1e-9)
    b, lz = ao.fit_beta(ref.mean(0), ref)
    np.testing.assert_allclose(b, 0, atol=1e-6)
    np.testing.assert_allclose(ao.gain(ref.mean(0), b, lz), 0, atol=1e-9)


def test_bernoulli_reference_gives_bernoulli_kl():
    ref = np.r_[np.ones(2), np.zeros(98)][:, None]          # pi = 0.02
    beta, logz = ao.fit_beta([0.5], ref)
    kl = 0.5 * np.log(0.5 / 0.02) + 0.5 * np.log(0.5 / 0.98)
    assert ao.gain([0.5], beta, logz)[0] == pytest.approx(kl, abs=1e-6)


def test_maxent_rejects_bad_input():
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        ao.fit_beta([0.5], np.array([[1.5], [0.2]]))
    with pytest.raises(ValueError, match="features"):
        ao.fit_beta([0.5, 0.2], np.random.default_rng(0).random((10, 3)))
    with pytest.raises(ValueError, match="M >= 2"):
        ao.log_z(1.0, np.array([[0.5]]))


# ------------------------------------------------------------------ block pursuit, parsing, evidence

def test_block_pursuit_recovers_and_part_and_or_branches(ref):
    rng = np.random.default_rng(1)
    R, half = planted(rng)
    blocks = ao.block_pursuit(R, ref, gamma=1.5, min_rows=6, conflict=lambda a, b: False)
    t = ao.group_or_slots(blocks)
    learned = sorted(sorted(tuple(int(j) for j in b.cols) for b in slot) for slot in t.slots)
    assert learned == [[(0,)], [(1, 2), (3, 4)]]
    rows = {tuple(int(j) for j in b.cols): b.rows for b in t.blocks}
    assert rows[(0,)].all() and np.array_equal(rows[(1, 2)], half) and np.array_equal(rows[(3, 4)], ~half)


def test_terms_sum_to_score_and_prescription_names_missing_part(ref):
    rng = np.random.default_rng(2)
    R, half = planted(rng)
    t = ao.group_or_slots(ao.block_pursuit(R, ref, gamma=1.5, min_rows=6, conflict=lambda a, b: False))
    r = R[np.flatnonzero(half)[0]].copy()
    r[0] = 0.0
    ev = ao.evidence(t, r)
    assert sum(e[3] for e in ev) == pytest.approx(ao.parse(t, r[None]).score[0])
    j, term = ao.prescription(t, r)
    assert j == 0 and term < 0


def test_block_pursuit_validates():
    with pytest.raises(ValueError, match="columns"):
        ao.block_pursuit(np.zeros((5, 3)), np.zeros((5, 4)))
    with pytest.raises(ValueError, match="gamma"):
        ao.block_pursuit(np.zeros((5, 3)), np.zeros((5, 3)), gamma=-1.0)
    with pytest.raises(ValueError, match="no terminals"):
        ao.prescription(ao.Template([]), np.zeros(3))


def test_scene_conflict_is_local():
    idx = ao.canvas.INDEX
    assert ao.scene_conflict(idx[("person", 2, 2)], idx[("tree", 3, 3)])          # objects, one cell apart
    assert not ao.scene_conflict(idx[("person", 2, 2)], idx[("person", 2, 4)])
    assert not ao.scene_conflict(idx[("person", 2, 2)], idx[("hline", 2, -1)])     # a line and an object
    assert ao.scene_conflict(idx[("hline", 2, -1)], idx[("hline", 3, -1)])


# ------------------------------------------------------------------ the world and its features

def test_good_scenes_follow_their_theme_and_bad_ones_deviate():
    rng = np.random.default_rng(3)
    for theme in ao.THEME_NAMES:
        g = ao.sample_good(theme, rng, extra_object=0.0)
        assert {it.rule for it in g.items} <= ao.true_terminals(theme)
        assert g.deviation <= 0.31 * len(g.items)                  # jitter of at most 1.5 px per axis
        b = ao.perturb(g, rng, n=1)
        assert not b.good and b.deviation > g.deviation and len(b.perturbations) == 1


def test_render_is_deterministic_and_checked():
    rng = np.random.default_rng(4)
    s = ao.sample_good("thirds", rng)
    np.testing.assert_array_equal(ao.render(s), ao.render(s))
    assert ao.render(s).shape == (ao.SIZE, ao.SIZE)
    with pytest.raises(ValueError, match="empty"):
        ao.render_all([])
    with pytest.raises(ValueError, match="theme"):
        ao.sample_good("golden-ratio", rng)


def test_cell_max_finds_the_nearest_cell():
    presence = np.zeros((1, ao.SIZE, ao.SIZE), dtype=np.float32)
    y, x = int(ao.cell_centre(2)), int(ao.cell_centre(4))
    presence[0, y, x] = 1.0
    out = ao.cell_max(presence, 4.0)[0]
    assert np.unravel_index(out.argmax(), out.shape) == (2, 4) and out[2, 4] == pytest.approx(1.0, abs=0.01)


def test_features_validate_shapes():
    with pytest.raises(ValueError, match="images must be"):
        ao.raw_filters(np.zeros((2, 10, 10)))
    bank = ao.FilterBank(np.ones(7))
    with pytest.raises(ValueError, match="centres"):
        ao.object_features(bank.pooled(np.zeros((2, ao.SIZE, ao.SIZE))), np.zeros((3, 2)))


# ------------------------------------------------------------------ end to end, small

@pytest.fixture(scope="module")
def world():
    return ao.learn_world(np.random.default_rng(100), n_per_class=40, n_object_ref=120, n_scene_ref=200)


def test_world_learns_a_template_that_scores_good_above_bad(world):
    rng = np.random.default_rng(101)
    res = ao.experiment.theme_study(world, "symmetry", ao.experiment.theme_data("symmetry", rng, 40, 30, 10))
    assert res.recall >= 0.5
    good, bad = res.scores["template"][res.y_test], res.scores["template"][~res.y_test]
    assert good.mean() > bad.mean()


def test_expansion_adds_nothing_without_candidates(world):
    rng = np.random.default_rng(102)
    R = world.features([ao.sample_good("thirds", rng) for _ in range(30)])
    t = ao.learn_template(world, R)
    grown, added = ao.expand(t, R[:3], world.ref, min_rows=5)
    assert added == [] and len(grown.slots) == len(t.slots)


def test_cnn_trains_and_counts_parameters():
    rng = np.random.default_rng(5)
    X = rng.random((16, ao.SIZE, ao.SIZE)).astype(np.float32)
    model, seconds = ao.train_cnn(X, np.zeros(16, int), rng.integers(0, 2, 16), n_themes=1, steps=3, batch=8)
    assert ao.n_parameters(model) > 1e4 and seconds >= 0
    assert ao.cnn_scores(model, X[:4], np.zeros(4, int), 1).shape == (4,)
    with pytest.raises(ValueError, match="same length"):
        ao.train_cnn(X, np.zeros(15, int), np.zeros(16), n_themes=1, steps=1)


def test_cnn_validation_curve_records_held_out_loss():
    rng = np.random.default_rng(6)
    X = rng.random((20, ao.SIZE, ao.SIZE)).astype(np.float32)
    y = np.r_[np.zeros(10), np.ones(10)]
    steps, loss, auc = ao.cnn_validation_curve(X, np.zeros(20, int), y, n_themes=1, max_steps=6, every=2, batch=8)
    assert list(steps) == [2, 4, 6] and loss.shape == auc.shape == (3,) and np.all(loss > 0)
    assert np.all((auc >= 0) & (auc <= 1))
    with pytest.raises(ValueError, match="holdout"):
        ao.cnn_validation_curve(X, np.zeros(20, int), np.zeros(20), n_themes=1, holdout=1.0)


def test_poisson_rate_interval():
    rate, lo, hi = ao.poisson_rate_ci([0] * 10)
    assert rate == lo == 0.0 and hi == pytest.approx(-np.log(0.025) / 10, rel=1e-6)   # exact bound for no event
    rate, lo, hi = ao.poisson_rate_ci([1, 0, 2, 0])
    assert lo < rate == 0.75 < hi
    with pytest.raises(ValueError, match="counts"):
        ao.poisson_rate_ci([0.5])


def test_expansion_runs_count_recovered_and_false_branches(world):
    runs = ao.expansion_runs(world, np.random.default_rng(103), 1, n_labeled=30, pool_size=20, n_distractor=10)
    assert runs.shape == (1, 2) and np.all(runs >= 0) and runs[0, 0] <= 2


def test_run_study_rejects_unknown_scale():
    with pytest.raises(ValueError, match="scale"):
        ao.run_study(0, "huge")


# ------------------------------------------------------------------ the interval of spearman-above-cnn

def test_row_spearman_matches_scipy_with_ties():
    from scipy.stats import spearmanr
    from repro.and_or_templates.experiment import _row_spearman

    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 5, (3, 20)).astype(float), rng.normal(size=(3, 20))
    assert np.allclose(_row_spearman(x, y), [spearmanr(a, b).statistic for a, b in zip(x, y)])


def test_spearman_gap_interval():
    from types import SimpleNamespace

    rng = np.random.default_rng(1)

    def theme():
        rating = rng.random(60)
        return SimpleNamespace(ratings=rating, y_test=(rating > 0.5).astype(int), accuracy={"a": 1.0, "b": 1.0},
                               scores={"a": rating + rng.normal(0, 0.05, 60), "b": rating + rng.normal(0, 0.3, 60)})

    studies = [SimpleNamespace(themes=[theme(), theme()]) for _ in range(2)]
    gap, lo, hi = ao.spearman_gap_ci(studies, "a", "b", n_resamples=300)
    worst = min(ao.summary_metrics(s.themes, "a")["spearman"] - ao.summary_metrics(s.themes, "b")["spearman"]
                for s in studies)
    assert gap == pytest.approx(worst) and 0 < lo < gap < hi
    same = ao.spearman_gap_ci(studies, "a", "a", n_resamples=50)
    assert same == pytest.approx((0.0, 0.0, 0.0))


def test_resampled_spearman_matches_spearman_on_the_resample():
    from repro.and_or_templates.experiment import _resampled_spearman, _row_spearman

    rng = np.random.default_rng(2)
    n, B = 25, 40
    x, y = rng.integers(0, 6, n).astype(float), rng.normal(size=n)      # ties in x, and more from repeated draws
    idx = rng.integers(n, size=(B, n))
    counts = np.stack([np.bincount(i, minlength=n) for i in idx]).astype(float)
    assert np.allclose(_resampled_spearman(x, y, counts), _row_spearman(x[idx], y[idx]))


def test_pooled_precision_counts_false_terminals():
    from types import SimpleNamespace

    def res(terms):
        return SimpleNamespace(template=SimpleNamespace(terminals=lambda: set(terms)))

    true = [sorted(ao.true_terminals(t)) for t in ao.THEME_NAMES]
    exact = [res(ts) for ts in true]
    one_off = [res(true[0][:-1] + [max(max(ts) for ts in true) + 1])] + exact[1:]   # one true terminal replaced
    prec, lo, hi, n, false = ao.pooled_precision([exact, one_off], seed=0)
    assert false == 1 and n == 2 * sum(map(len, true)) and prec == pytest.approx(1 - 1 / n)
    assert lo <= prec <= hi <= 1
