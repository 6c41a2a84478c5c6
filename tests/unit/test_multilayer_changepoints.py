"""Unit tests of repro.multilayer_changepoints (chapters/multilayer-changepoints): small cases computed by hand,
the prefix-sum CUSUM against its definition, TH-PCA, Stage I/II, metrics, inference and input validation."""
import numpy as np
import pytest

from repro import multilayer_changepoints as cp


# ------------------------------------------------------------------ CUSUM

def test_cusum_weights_by_hand():
    # s=0, e=4, t=1: left weight sqrt(3/(4*1)), right weight -sqrt(1/(4*3))
    w = cp.cusum_weights(0, 4, 1)
    np.testing.assert_allclose(w, [np.sqrt(3 / 4), -np.sqrt(1 / 12), -np.sqrt(1 / 12), -np.sqrt(1 / 12)])
    assert abs(w.sum()) < 1e-12 and np.isclose((w ** 2).sum(), 1.0)  # blind to the mean; unit norm


def test_cusum_of_a_step_by_hand():
    # y = (0, 0, 1, 1): at t=2 on (0, 4] the CUSUM is sqrt(2/8)*0 - sqrt(2/8)*2 = -1
    y = np.array([0.0, 0.0, 1.0, 1.0])
    assert np.isclose(cp.cusum(y, 0, 4, 2), -1.0)
    np.testing.assert_allclose(cp.scalar_cusum(y, 0, 4), [cp.cusum(y, 0, 4, t) for t in (1, 2, 3)])


def test_prefix_sum_inner_product_matches_definition():
    rng = np.random.default_rng(0)
    A, B = rng.random((12, 3, 3, 2)), rng.random((12, 3, 3, 2))
    G = cp.prefix_sums(A) @ cp.prefix_sums(B).T
    s, e = np.array([0, 2, 3]), np.array([12, 9, 7])
    t = np.array([5, 4, 6])
    fast = cp.cusum_inner(G, s, e, t)
    slow = [np.sum(cp.cusum(A, a, b, c) * cp.cusum(B, a, b, c)) for a, b, c in zip(s, e, t)]
    np.testing.assert_allclose(fast, slow, rtol=1e-10)


def test_prefix_sums_bitwise_equal_to_cumsum():
    rng = np.random.default_rng(3)
    for Y in (rng.standard_normal((30, 4, 4, 3)), (rng.random((9, 5, 5, 2)) < 0.3).astype(float), rng.random(7)):
        flat = Y.reshape(Y.shape[0], -1)
        ref = np.vstack([np.zeros((1, flat.shape[1])), np.cumsum(flat, axis=0)])
        assert np.array_equal(cp.prefix_sums(Y), ref)


def test_ruptures_nets_reuses_the_bandwidth_of_the_permuted_copy():
    import ruptures as rpt
    seq = cp.scenario("s4", n=12, rng=1)
    x = seq.A.reshape(seq.T, -1)
    xp = x[np.random.default_rng(0).permutation(seq.T)]
    assert rpt.KernelCPD(kernel="rbf").fit(x).cost.gamma == rpt.KernelCPD(kernel="rbf").fit(xp).cost.gamma
    algo = rpt.KernelCPD(kernel="rbf", min_size=2).fit(xp)
    pen = algo.cost.sum_of_costs([seq.T]) - algo.cost.sum_of_costs(algo.predict(n_bkps=1))
    ref = rpt.KernelCPD(kernel="rbf", min_size=2).fit(x).predict(pen=pen)[:-1]
    assert cp.ruptures_nets(seq.A, rng=0).tolist() == ref


# ------------------------------------------------------------------ seeded intervals, Stage I

def test_seeded_intervals_first_layers():
    iv = cp.seeded_intervals(16, decay=0.5, min_length=4)
    rows = {tuple(r) for r in iv}
    assert (0, 16) in rows                                # layer 1: the whole sequence
    assert {(0, 8), (4, 12), (8, 16)} <= rows             # layer 2: 3 intervals of length 8
    assert np.all(iv[:, 1] - iv[:, 0] >= 4)


def test_candidate_splits_leave_two_observations_each_side():
    # (0, 5] holds time points 1..5; trim = 1, so a split must leave at least 2 points on each side: t = 2 or 3
    np.testing.assert_array_equal(cp.candidate_splits(0, 5), [2, 3])
    np.testing.assert_array_equal(cp.candidate_splits(10, 14), [12])
    assert cp.candidate_splits(0, 3).size == 0                # too short to split with 2 points on each side
    s, e = 0, 200                                             # trim = ceil(200/64) = 4: t from 5 to 195
    t = cp.candidate_splits(s, e)
    assert t.min() - s == 5 and e - t.max() == 5


def test_stage_one_statistic_never_sits_on_an_interval_edge():
    null = cp.scenario("null", n=30, T=120, rng=0)
    A_half, B_half = cp.split_halves(null.A)
    st = cp.seeded_binary_segmentation(A_half, B_half, tau=np.inf)
    ok = np.isfinite(st.stat)
    left = st.best[ok] - st.intervals[ok, 0]
    right = st.intervals[ok, 1] - st.best[ok]
    assert left.min() >= 2 and right.min() >= 2


def test_stage_one_finds_a_clean_step():
    rng = np.random.default_rng(1)
    P = np.stack([np.full((6, 6, 2), 0.2), np.full((6, 6, 2), 0.8)])
    seq = cp.piecewise_sequence(P, [40], 80, rng)
    A_half, B_half = cp.split_halves(seq.A)
    st = cp.seeded_binary_segmentation(A_half, B_half, tau=5.0)
    np.testing.assert_array_equal(st.points, [20])


def test_detect_null_and_two_changes():
    null = cp.scenario("null", n=30, T=120, rng=0)
    assert cp.detect_change_points(null.A, directed=True, intervals=False).change_points.size == 0
    s1 = cp.scenario("s1", n=30, T=120, rng=0)
    res = cp.detect_change_points(s1.A, directed=True, n_sim=100)
    assert np.all(np.abs(res.change_points - s1.change_points) <= 1)
    assert len(res.intervals) == 2 and all(i.lower <= i.upper for i in res.intervals)


def test_undirected_input():
    rng = np.random.default_rng(2)
    P = np.stack([np.full((8, 8, 2), 0.2), np.full((8, 8, 2), 0.7)])
    seq = cp.piecewise_sequence(P, [30], 60, rng, directed=False)
    assert np.allclose(seq.A, seq.A.transpose(0, 2, 1, 3))
    res = cp.detect_change_points(seq.A, ranks=(2, 2, None), n_sim=50)
    assert np.all(np.abs(res.change_points - 30) <= 1)


# ------------------------------------------------------------------ TH-PCA

def test_th_pca_recovers_a_low_rank_tensor():
    rng = np.random.default_rng(3)
    X = rng.dirichlet(np.ones(2), size=30)
    W = 0.3 + 0.4 * rng.random((3, 2, 2))
    P = cp.ddm_probabilities(X, X, W)
    noisy = P + 0.05 * rng.standard_normal(P.shape)
    est = cp.th_pca(noisy, (2, 2, 3), clip=(0, 1))
    assert np.linalg.norm(est - P) < 0.5 * np.linalg.norm(noisy - P)


def test_hetero_pca_exact_on_rank_one():
    u = np.array([1.0, 2.0, 2.0]) / 3
    U = cp.hetero_pca(np.outer(u, [1.0, 1.0, 0.5, 2.0]), 1)
    assert np.isclose(abs(U[:, 0] @ u), 1.0)


# ------------------------------------------------------------------ refinement

def test_least_squares_refine_exact_on_noiseless_step():
    P = np.stack([np.full((4, 4, 1), 0.2), np.full((4, 4, 1), 0.6)])
    A = np.concatenate([np.repeat(P[0][None], 13, 0), np.repeat(P[1][None], 11, 0)])
    np.testing.assert_array_equal(cp.least_squares_refine(A, [10], (4, 4, 1)), [13])


def test_local_windows_by_hand():
    np.testing.assert_array_equal(cp.local_windows([10, 20], 40), [[5, 15], [15, 30]])


# ------------------------------------------------------------------ metrics

def test_metrics_by_hand():
    assert cp.one_sided_hausdorff([10, 50], [12]) == 2.0
    assert cp.one_sided_hausdorff([12], [10, 50]) == 38.0
    assert cp.one_sided_hausdorff([], [3]) == np.inf and cp.one_sided_hausdorff([], []) == 0.0
    # truth splits 100 into (0,50], (50,100]; estimate at 40: Jaccards 40/50 and 50/60
    assert np.isclose(cp.covering([50], [40], 100), (50 * 0.8 + 50 * 50 / 60) / 100)
    ev = cp.evaluate([50], [], 100)
    assert ev["abs_K_error"] == 1 and ev["covering"] == 0.5


# ------------------------------------------------------------------ inference

def test_limit_scales_like_sigma_squared():
    q1 = cp.limit_quantiles(1.0, 1.0, n_sim=4000, rng=0)[1]
    q2 = cp.limit_quantiles(2.0, 2.0, n_sim=4000, rng=0)[1]
    assert 3.6 <= q2 / q1 <= 4.4


def test_confidence_interval_shape():
    ci = cp.confidence_intervals([100], [2.0], [[0.5, 0.5]], n_sim=500, rng=0)[0]
    assert ci.lower < 100 < ci.upper and np.isclose(ci.length * 4, ci.length * ci.kappa ** 2)


# ------------------------------------------------------------------ validation

@pytest.mark.parametrize("bad, word", [
    (np.zeros((20, 5, 4, 2)), "A must have shape"),
    (np.zeros((20, 5, 5)), "A must have shape"),
    (np.zeros((4, 5, 5, 2)), "T=4"),
])
def test_detect_rejects_bad_shapes(bad, word):
    with pytest.raises(ValueError, match=word):
        cp.detect_change_points(bad)


def test_detect_rejects_non_symmetric_layers():
    A = np.zeros((20, 4, 4, 1))
    A[:, 0, 1, 0] = 1
    with pytest.raises(ValueError, match="non-symmetric"):
        cp.detect_change_points(A)
    cp.detect_change_points(A, directed=True, intervals=False)   # fine when declared directed


def test_other_validation():
    with pytest.raises(ValueError, match="alpha"):
        cp.detect_change_points(np.zeros((20, 4, 4, 1)), alpha=2)
    with pytest.raises(ValueError, match="name"):
        cp.scenario("s9")
    with pytest.raises(ValueError, match="change_points"):
        cp.piecewise_sequence(np.zeros((2, 3, 3, 1)), [5], 4, np.random.default_rng(0))
    with pytest.raises(ValueError, match="sigma_left"):
        cp.simulate_limit(-1.0, 1.0)
    with pytest.raises(ValueError, match="decay"):
        cp.seeded_intervals(10, decay=1.5)
    with pytest.raises(ValueError, match="kappa"):
        cp.weak_jump(-1.0)


def test_s3_paper_moves_a_tenth_of_the_nodes_in_layer_one_only():
    seq = cp.scenario("s3-paper", n=50, T=200, rng=0)
    np.testing.assert_array_equal(seq.change_points, [50, 100, 150])
    P = seq.P                                                  # (4 segments, n, n, L)
    assert np.all(P[1:, :, :, 1:] == P[:1, :, :, 1:])         # layers 2..L never change
    first = P[1, :, :, 0] != P[0, :, :, 0]
    # sizes (15, 20, 15) -> (20, 15, 15): nodes 15..19 move from community 2 to 1; community 3 (35..49) is untouched
    np.testing.assert_array_equal(first.sum(1), np.r_[np.full(15, 5), np.full(5, 30), np.full(15, 5), np.zeros(15)])
    np.testing.assert_array_equal(P[3], P[0])                 # back to the first segment's sizes


def test_hetero_pca_eigen_orders_pick_the_largest_or_the_largest_in_absolute_value():
    # three unit rows at 120 degrees: the diagonal-deleted Gram is -(J - I)/2, eigenvalues -1 (along 1) and 1/2, 1/2
    h = np.sqrt(3) / 2
    M = np.array([[1.0, 0.0], [-0.5, h], [-0.5, -h]])
    ones = np.ones(3) / np.sqrt(3)
    U_signed = cp.hetero_pca(M, 1, n_iter=0)                   # n_iter=0: the diagonal stays deleted
    U_abs = cp.hetero_pca(M, 1, n_iter=0, eigen_order="absolute")
    assert abs(U_signed[:, 0] @ ones) < 1e-12                  # a +1/2 eigenvector, orthogonal to 1
    assert np.isclose(abs(U_abs[:, 0] @ ones), 1.0)            # the -1 eigenvector: 1 itself
    with pytest.raises(ValueError, match="eigen_order"):
        cp.hetero_pca(M, 1, eigen_order="magnitude")
    with pytest.raises(ValueError, match="eigen_order"):
        cp.detect_change_points(np.zeros((20, 5, 5, 2)), directed=True, eigen_order="magnitude")
