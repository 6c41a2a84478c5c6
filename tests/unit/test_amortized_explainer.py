"""Unit tests of repro.amortized_explainer and its faithfulness metrics (repro.amortized_explainer.faithfulness)
(chapters/amortized-explainer): metrics on cases with known answers, captum's infidelity, groups, dedup and filter,
the two signs of L_LC, the dynamic α, validation, and a tiny training run on the additive-logit toy."""
import numpy as np
import pytest
import torch
from scipy.stats import pearsonr, spearmanr

from repro.amortized_explainer import faithfulness as at
from repro.common import thread_limit
from repro import amortized_explainer as ae


def linear_logit(w):
    return lambda x: torch.stack([torch.zeros(x.shape[0]), x.reshape(x.shape[0], -1) @ w], 1)


@pytest.fixture
def linear():
    g = torch.Generator().manual_seed(0)
    w = torch.randn(6, generator=g)
    x = torch.randn(8, 6, generator=g)
    return linear_logit(w), x, w * x, torch.ones(8, dtype=torch.long)


def test_exact_attribution_is_perfect_on_the_saliency_metrics(linear):
    model, x, a, t = linear
    good = at.evaluate(model, x, a, target=t)
    bad = at.evaluate(model, x, -a, target=t)
    for m in ("FC", "FE", "INF"):
        assert torch.allclose(good[m], torch.ones(8), atol=1e-5)
        assert torch.allclose(bad[m], -torch.ones(8), atol=1e-5)
    for m in (m for m in at.METRICS if m != "MC"):      # MC correlates signed a with a squared effect
        better = good[m].mean() >= bad[m].mean() if at.HIGHER_IS_BETTER[m] else good[m].mean() <= bad[m].mean()
        assert better, m


def test_monotonicity_is_perfect_for_non_negative_exact_attributions():
    w, x = torch.tensor([0.5, 1.0, 2.0, 3.0]), torch.tensor([[1.0, 2.0, 0.3, 0.1], [2.0, 1.0, 1.0, 1.0]])
    mc = at.monotonicity_correlation(linear_logit(w), x, w * x, target=torch.ones(2, dtype=torch.long))
    assert torch.allclose(mc, torch.ones(2), atol=1e-6)


def test_single_metrics_match_evaluate(linear):
    model, x, a, t = linear
    every = at.evaluate(model, x, a, target=t)
    assert torch.allclose(at.deletion(model, x, a, target=t), every["DEL"])
    assert torch.allclose(at.insertion(model, x, a, target=t), every["INS"])
    assert torch.allclose(at.irof(model, x, a, target=t), every["IROF"])
    assert torch.allclose(at.region_perturbation(model, x, a, target=t), every["RP"])
    assert torch.allclose(at.positive_perturbation(model, x, a, target=t), every["POS"])
    assert torch.allclose(at.negative_perturbation(model, x, a, target=t), every["NEG"])
    assert torch.allclose(at.faithfulness_estimate(model, x, a, target=t), every["FE"])
    assert torch.allclose(at.monotonicity_correlation(model, x, a, target=t), every["MC"])


def test_curves_by_hand():
    # score = mean of the four features; x = 1, baseline 0: the deletion curve is 1, .75, .5, .25, 0 in any order
    model = lambda x: torch.stack([torch.zeros(x.shape[0]), x.mean(1)], 1)
    x, a, t = torch.ones(1, 4), torch.tensor([[4.0, 3, 2, 1]]), torch.ones(1, dtype=torch.long)
    assert float(at.deletion(model, x, a, target=t)) == pytest.approx(0.5)
    assert float(at.insertion(model, x, a, target=t)) == pytest.approx(0.5)
    assert float(at.irof(model, x, a, target=t)) == pytest.approx(0.5)
    assert float(at.region_perturbation(model, x, a, target=t)) == pytest.approx(0.5)
    # chunks of two groups: 1, .5, 0
    assert float(at.deletion(model, x, a, target=t, step=2)) == pytest.approx(0.5)


def test_freeze_holds_the_curve_once_the_class_flips():
    # class 1 scores x0 + x1 and class 0 scores a constant .5: removing feature 0 (value 1) flips the argmax
    model = lambda x: torch.stack([torch.full((x.shape[0],), 0.5), x[:, 0] + x[:, 1]], 1)
    x, a = torch.tensor([[1.0, 0.4]]), torch.tensor([[1.0, 0.0]])
    # removal order: feature 0 then 1; curve 1.4, 0.4 (flipped: held), 0.4 instead of 0
    assert float(at.positive_perturbation(model, x, a)) == pytest.approx((1.4 + 0.4) / 4 + (0.4 + 0.4) / 4)
    assert float(at.deletion(model, x, a)) == pytest.approx((1.4 + 0.4) / 4 + 0.4 / 4)


def test_correlations_match_numpy_and_scipy():
    g = torch.Generator().manual_seed(1)
    u, v = torch.randn(5, 30, generator=g, dtype=torch.float64), torch.randn(5, 30, generator=g, dtype=torch.float64)
    v[:, :10] = 0.0                                         # ties for the ranks
    for i in range(5):
        assert float(at.pearson(u, v)[i]) == pytest.approx(pearsonr(u[i], v[i])[0], abs=1e-9)
        assert float(at.spearman(u, v)[i]) == pytest.approx(spearmanr(u[i], v[i])[0], abs=1e-9)
    assert float(at.pearson(u[:1], torch.ones(1, 30, dtype=torch.float64))) == 0.0


def test_groups_sum_feature_attributions_and_patch_masks():
    groups, n = at.as_groups((1, 8, 8), ae.make_task.__globals__["torch"].tensor(
        ((np.arange(8)[:, None] // 2) * 4 + np.arange(8)[None] // 2)[None]))
    assert n == 16
    a = torch.randn(3, 1, 8, 8)
    ag = at.group_attributions(a, a.shape, groups, n)
    assert torch.allclose(ag[:, 0], a[:, 0, :2, :2].sum((1, 2)), atol=1e-6)
    x = torch.randn(3, 1, 8, 8)
    mask = torch.zeros(3, 1, 16, dtype=torch.bool)
    mask[:, 0, 5] = True                                    # patch 5: rows 2-3, columns 2-3
    xs = at.perturb(x, mask, 0.0, groups)[:, 0]
    assert torch.all(xs[:, 0, 2:4, 2:4] == 0) and torch.equal(xs[:, 0, :2], x[:, 0, :2])
    assert ae.tokens(x, groups, 16).shape == (3, 16, 4)


def test_infidelity_mse_equals_captum(linear):
    from captum.metrics import infidelity

    net = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3), torch.nn.Softmax(1))
    model, x, _, _ = linear
    a = torch.randn_like(x)
    t = net(x).argmax(1)
    seen = []
    g = torch.Generator().manual_seed(3)

    def perturb_func(inputs):
        noise = torch.randn(inputs.shape, generator=g)
        seen.append(noise)
        return noise, inputs - noise

    ref = infidelity(net, perturb_func, x, a, target=t, n_perturb_samples=10, max_examples_per_batch=80)
    p = torch.cat(seen).reshape(8, 10, 6)                    # captum repeats each input 10 times in a row
    ours = at.infidelity_mse(net, x, a, p, target=t)
    assert torch.allclose(ours, ref, rtol=1e-4, atol=1e-6)


def test_mean_ranks_and_validation(linear):
    model, x, a, t = linear
    scores = {"a": {m: 1.0 for m in at.METRICS}, "b": {m: 0.0 for m in at.METRICS}}
    ranks, per = at.mean_ranks(scores)
    assert ranks["a"] == pytest.approx(1.2) and ranks["b"] == pytest.approx(1.8)   # DEL and POS: lower is better
    with pytest.raises(ValueError, match="a must"):
        at.deletion(model, x, a[:, :3], target=t)
    with pytest.raises(ValueError, match="baseline"):
        at.deletion(model, x, a, baseline=torch.zeros(5), target=t)
    with pytest.raises(ValueError, match="groups"):
        at.deletion(model, x, a, groups=torch.tensor([0, 0, 2, 2, 3, 3]), target=t)
    with pytest.raises(ValueError, match="subset_size"):
        at.faithfulness_correlation(model, x, a, subset_size=7, target=t)
    with pytest.raises(ValueError, match="model"):
        at.deletion("f", x, a)


def test_dedup_and_filter():
    base = torch.tensor([1.0, 2, 3, 4])
    maps = torch.stack([base, 2 * base, -base, torch.tensor([4.0, -1, 0, 1])])[None]     # (1, 4, 4)
    keep = ae.dedup(maps, 0.6)
    assert keep.tolist() == [[True, False, True, True]]
    scores = {m: torch.tensor([[0.9, 0.9, 0.1, 0.5]] if at.HIGHER_IS_BETTER[m] else [[0.1, 0.1, 0.9, 0.5]])
              for m in at.METRICS}
    kept = ae.filter_maps(scores, keep, p=0.2)
    # the third survivor is the worst on every metric; the second was already a duplicate
    assert kept.tolist() == [[True, False, False, True]]
    with pytest.raises(ValueError, match="delta"):
        ae.dedup(maps, 2.0)


def test_the_two_signs_of_l_lc_add_to_one():
    g = torch.Generator().manual_seed(4)
    phi, mask = torch.randn(5, 7, generator=g), torch.rand(5, 16, 7, generator=g) < 0.5
    delta = torch.randn(5, 16, generator=g)
    assert float(ae.l_lc(phi, mask, delta, "paper") + ae.l_lc(phi, mask, delta, "code")) == pytest.approx(1.0)
    assert float(ae.l_pc(phi, 3 * phi + 1)) == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(ValueError, match="sign"):
        ae.l_lc(phi, mask, delta, "kept")


def test_dynamic_alpha():
    alpha = ae.DynamicAlpha(eps=1e-4, window=3, c=10)
    seen = [alpha.update(t, 0.3) for t in range(6)]
    assert seen[:2] == [1.0, 1.0] and seen[2] == pytest.approx(0.5) and seen[5] < seen[3] < 0.5
    assert alpha.update(6, 0.9) == 1.0                       # the variance jumps: back to L_PC only


def test_toy_learns_the_exact_attribution_quickly():
    with thread_limit(1):                                   # tiny tensors: more threads only cost time
        r = ae.run_toy(d=4, n_train=64, n_test=32, epochs=8, k=16, seed=1)
    assert r.pearson["paper"] > 0.6 and r.pearson["code"] < -0.6
    with pytest.raises(ValueError, match="d must"):
        ae.run_toy(d=1)


# ------------------------------------------------------------------ intervals of the chapter's claims

def _fake_results():
    from types import SimpleNamespace

    rng = np.random.default_rng(0)
    pool = {"fc": np.tile([1.0, 0.0, 0.5], (30, 1)), "dedup": np.tile([True, True, False], (30, 1)),
            "filtered": np.tile([True, False, False], (30, 1))}
    scores = lambda shift: {"zero": {"A": {"INF": shift + rng.normal(0, 0.2, 40)}, "B": {"INF": rng.normal(0, 0.2, 40)}}}
    return {"one": SimpleNamespace(pool_items=pool, item_scores=scores(0.3)),
            "two": SimpleNamespace(pool_items=pool, item_scores=scores(0.1))}


def test_pool_fc_gain_interval_is_a_point_when_every_input_gives_the_same_gain():
    gain, lo, hi = ae.pool_fc_gain_ci(_fake_results(), ["one", "two"], n_resamples=200)
    assert gain == pytest.approx(0.5) and lo == pytest.approx(0.5) and hi == pytest.approx(0.5)


def test_worst_gap_interval_brackets_the_smaller_task_gap():
    res = _fake_results()
    gap, lo, hi = ae.worst_gap_ci(res, ["one", "two"], "A", "B", "INF", n_resamples=500)
    per = [float((res[k].item_scores["zero"]["A"]["INF"] - res[k].item_scores["zero"]["B"]["INF"]).mean())
           for k in ("one", "two")]
    assert gap == pytest.approx(min(per))
    assert lo < gap < hi
    with pytest.raises(ValueError):
        ae.worst_gap_ci(res, ["one"], "A", "B", "INF", n_resamples=1)
