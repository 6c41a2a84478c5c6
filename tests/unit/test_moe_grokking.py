"""Unit tests of repro.moe_grokking and its grokking_mix (chapters/moe-grokking)."""
import numpy as np
import pytest
import torch
from rapidfuzz.distance import Levenshtein

from repro import moe_grokking as mg
from repro.moe_grokking.grokking_mix import DEFAULT_GROUPS, answer_mask, make_grokking_mix


# ------------------------------------------------------------------ edit distance
def test_levenshtein_hand_cases():
    assert mg.levenshtein("kitten", "sitting") == 3
    assert mg.levenshtein([1, 2, 3], [1, 2, 3]) == 0
    assert mg.levenshtein([], [4, 5]) == 2
    assert mg.levenshtein([1, 2, 3, 4], [2, 3, 4, 1]) == 2      # delete the first 1, append one


def test_rapidfuzz_matches_our_dynamic_programme():
    rng = np.random.default_rng(0)
    for _ in range(300):
        s = rng.integers(0, 5, rng.integers(0, 8)).tolist()
        t = rng.integers(0, 5, rng.integers(0, 8)).tolist()
        assert Levenshtein.distance(s, t) == mg.levenshtein(s, t)


# ------------------------------------------------------------------ pathways
def _agg():
    # 3 samples, 2 layers, 4 experts: samples 0 and 1 route alike, sample 2 differs in layer 1 only
    return np.array([[[0.7, 0.3, 0, 0], [0, 0, 0.6, 0.4]],
                     [[0.6, 0.4, 0, 0], [0, 0, 0.9, 0.1]],
                     [[0.8, 0.2, 0, 0], [0.5, 0, 0, 0.5]]])


def test_pathways_take_sorted_top_k():
    p = mg.pathways(_agg(), k=2)
    assert p.shape == (3, 2, 2)
    np.testing.assert_array_equal(p[0], [[0, 1], [2, 3]])
    np.testing.assert_array_equal(p[2], [[0, 1], [0, 3]])
    np.testing.assert_array_equal(mg.pathways(_agg(), k=1)[:, 1, 0], [2, 2, 0])


def test_pathway_distance_hand_case():
    p = mg.pathways(_agg(), k=2)
    # pathways: A A B where B differs from A in one of 4 symbols -> pair distances 0, 1/4, 1/4; mean 1/6
    assert mg.pathway_distance(p, 4) == pytest.approx(1 / 6)
    np.testing.assert_allclose(mg.layer_pathway_distance(p), [0.0, 1 / 3])   # 1 of 2 slots in 2 of 3 pairs


def test_identical_pathways_have_distance_zero():
    p = np.tile(np.array([[[1, 3], [0, 2], [2, 3]]]), (5, 1, 1))
    assert mg.pathway_distance(p, 4) == 0.0


def test_same_expert_in_different_layers_is_a_different_symbol():
    s = mg.pathway_strings(np.array([[[1], [2]], [[2], [1]]]), n_experts=4)
    assert Levenshtein.distance(s[0], s[1]) == 2


def test_aggregate_gates_means_over_positions():
    g = torch.zeros(1, 4, 2)
    g[0, :, 0] = torch.tensor([1.0, 1.0, 0.0, 0.0])
    g[0, :, 1] = 1 - g[0, :, 0]
    agg = mg.aggregate_gates([g, g])
    assert agg.shape == (1, 2, 2)
    np.testing.assert_allclose(agg[0, 0], [2 / 3, 1 / 3])


def test_layer_consistency_hand_cases():
    W1 = np.array([[1.0, 0.0], [0.0, 1.0]])          # expert embeddings of layer 1 (rows)
    W2 = np.array([[1.0, 0.0], [-1.0, 0.0]])         # layer 2
    same = np.array([[[1.0, 0.0], [1.0, 0.0]]])      # expert 0 in both layers: cos(e1, e1) = 1
    opposite = np.array([[[1.0, 0.0], [0.0, 1.0]]])  # e1 then -e1: cos = -1
    orth = np.array([[[0.0, 1.0], [1.0, 0.0]]])      # e2 then e1: cos = 0
    np.testing.assert_allclose(mg.layer_consistency(same, [W1, W2]), [1.0])
    np.testing.assert_allclose(mg.layer_consistency(opposite, [W1, W2]), [-1.0])
    np.testing.assert_allclose(mg.layer_consistency(orth, [W1, W2]), [0.0], atol=1e-12)
    mixed = np.array([[[0.5, 0.5], [1.0, 0.0]]])     # (e1+e2)/2 then e1: cos = 1/sqrt(2)
    np.testing.assert_allclose(mg.layer_consistency(mixed, [W1, W2]), [2 ** -0.5])


def test_entropies():
    logits = torch.zeros(2, 3, 4)                    # uniform router
    np.testing.assert_allclose(mg.routing_entropy([logits]), [np.log(4)], rtol=1e-6)
    balanced = torch.tensor([[0, 1, 2, 3]])
    collapsed = torch.tensor([[2, 2, 2, 2]])
    np.testing.assert_allclose(mg.load_entropy([balanced, collapsed], 4), [np.log(4), 0.0], atol=1e-12)


# ------------------------------------------------------------------ times
def test_time_to_reach_and_onset():
    steps = np.array([0, 10, 20, 40, 80])
    acc = np.array([0.0, 0.5, 0.95, 0.9, 1.0])
    assert mg.time_to_reach(steps, acc, 0.9) == 20
    assert np.isnan(mg.time_to_reach(steps, acc, 1.1))
    # chance 0.1, final 0.9: onset is the first value above 0.5
    assert mg.generalization_onset(steps, [0.1, 0.1, 0.3, 0.6, 0.9], chance=0.1) == 40
    assert np.isnan(mg.generalization_onset(steps, [0.1] * 5, chance=0.1))


def test_memorization_times():
    steps = np.array([0, 10, 20, 30])
    correct = np.array([[0, 0, 1], [1, 0, 1], [0, 1, 1], [1, 1, 1]], dtype=bool)
    loss = np.array([[3, 3, 0.05], [0.05, 3, 0.05], [2, 0.2, 0.05], [0.05, 0.05, 0.05]])
    np.testing.assert_array_equal(mg.memorization_times(steps, correct, loss), [30, 30, 0])
    assert np.isnan(mg.memorization_times(steps, correct[:, :1] & False, loss[:, :1])[0])


def test_drop_from_peak_and_value_at():
    steps = np.array([0, 10, 20, 30, 40])
    d = np.array([0.1, 0.5, 0.8, 0.6, 0.4])
    assert mg.drop_from_peak(steps, d, start=10) == pytest.approx(0.5)
    assert mg.drop_from_peak(steps, d, start=40) == 0.0
    assert mg.value_at(steps, d, 15) == 0.8


def test_log_steps():
    s = mg.log_steps(1000, 20)
    assert s[0] == 0 and s[-1] == 1000 and np.all(np.diff(s) > 0) and len(s) <= 21


# ------------------------------------------------------------------ data
def test_mix_shapes_groups_and_determinism():
    mix = make_grokking_mix(p=7, seed=3)
    assert mix.names == tuple(n for n, _ in DEFAULT_GROUPS)
    assert mix.vocab_size == 7 + len(DEFAULT_GROUPS)
    assert mix.train_tokens.shape[1] == 4 and mix.train_tokens.dtype == torch.int64
    assert len(mix.train_tokens) + len(mix.test_tokens) == len(DEFAULT_GROUPS) * 49
    for g, (_, frac) in enumerate(DEFAULT_GROUPS):
        assert len(mix.group(g)) == round(frac * 49)
        assert torch.all(mix.group(g)[:, 0] == 7 + g)      # the op token names the group
    again = make_grokking_mix(p=7, seed=3)
    assert torch.equal(mix.train_tokens, again.train_tokens)
    assert not torch.equal(mix.train_tokens, make_grokking_mix(p=7, seed=4).train_tokens)


def test_mix_answers_follow_the_operations():
    mix = make_grokking_mix(p=11, groups=(("a+b", 0.5), ("ab+a", 0.5), ("random", 0.5)), seed=0)
    for split in ("train", "test"):
        t = mix.group(0, split).numpy()
        np.testing.assert_array_equal(t[:, 3], (t[:, 1] + t[:, 2]) % 11)
        t = mix.group(1, split).numpy()
        np.testing.assert_array_equal(t[:, 3], (t[:, 1] * t[:, 2] + t[:, 1]) % 11)
    assert mix.control == [2]
    r = torch.cat([mix.group(2, "train"), mix.group(2, "test")]).numpy()
    assert not np.array_equal(r[:, 3], (r[:, 1] + r[:, 2]) % 11)        # random labels, not a+b
    assert len({tuple(x) for x in r[:, 1:3]}) == 121                     # every pair once across the splits


def test_sampler_and_mask():
    mix = make_grokking_mix(p=7, seed=0)
    tokens, mask = mix.sampler(16, seed=1)(1)
    assert tokens.shape == (16, 4) and mask.shape == (16, 4)
    assert mask[:, 3].all() and not mask[:, :3].any()
    t2, _ = mix.sampler(16, seed=1)(1)
    assert torch.equal(tokens, t2)


# ------------------------------------------------------------------ validation
def test_validation_errors():
    with pytest.raises(ValueError, match="p must"):
        make_grokking_mix(p=2)
    with pytest.raises(ValueError, match="unknown operation"):
        make_grokking_mix(groups=(("a/b", 0.5),))
    with pytest.raises(ValueError, match="train fraction"):
        make_grokking_mix(groups=(("a+b", 1.0),))
    mix = make_grokking_mix(p=5)
    with pytest.raises(ValueError, match="g must"):
        mix.group(9)
    with pytest.raises(ValueError, match="split"):
        mix.group(0, "val")
    with pytest.raises(ValueError, match="tokens must"):
        answer_mask(torch.zeros(2, 5, dtype=torch.long))
    with pytest.raises(ValueError, match="k must"):
        mg.pathways(_agg(), k=5)
    with pytest.raises(ValueError, match="agg"):
        mg.layer_consistency(_agg(), [np.eye(4)])
    with pytest.raises(ValueError, match="at least two"):
        mg.pathway_distance(np.zeros((1, 2, 1), dtype=int), 4)
    with pytest.raises(ValueError, match="positions"):
        mg.aggregate_gates([torch.zeros(1, 4, 2)], positions=[7])
    with pytest.raises(ValueError, match="mix must"):
        mg.train_monitored("data")
    with pytest.raises(ValueError, match="steps and values"):
        mg.time_to_reach([0, 1], [0.5], 0.3)


# ------------------------------------------------------------------ training
def test_train_monitored_runs_a_few_steps(tmp_path):
    mix = make_grokking_mix(p=7, seed=0)
    cfg = mg.GrokkingConfig(d_model=16, n_heads=2, n_layers=2, n_experts=4, d_expert=16, steps=6, n_evals=3,
                            batch_size=32, n_monitor=4)
    log = mg.train_monitored(mix, cfg, seed=0)
    n = len(log["steps"])
    assert log["steps"][0] == 0 and log["steps"][-1] == 6
    assert log["train_acc"].shape == (n, mix.n_groups)
    assert log["layer_distance"].shape == (n, mix.n_groups, 2)
    assert log["monitor_correct"].shape == (n, mix.n_groups, 4)
    assert np.all((log["pathway_distance"] >= 0) & (log["pathway_distance"] <= 1))
    assert np.all(np.abs(log["consistency"]) <= 1 + 1e-9)
    assert len(log["loss"]) == 6
    assert log["router_probs"].shape == (n, mix.n_groups, 4, 2, 3, cfg.n_experts)
    assert log["router_probs"].dtype == np.uint8
    assert log["router_weights"].shape == (n, 2, cfg.n_experts, 16)
    curves = mg.paper_curves(log)                                # the paper's metrics, recomputed from the stored probs
    assert curves["distance"].shape == (n, mix.n_groups) and np.all(curves["distance"] >= 0)
    assert np.all((curves["consistency"] >= 0) & (curves["consistency"] <= 1))
    assert np.all(curves["length"] >= 2 * 3)                     # at least one expert per layer and prompt token
    with pytest.raises(ValueError, match="router probabilities"):
        mg.paper_curves({"steps": log["steps"]})
    # per-sample consistency, recomputed from the stored (8-bit) probabilities: its group means follow the log's
    # (up to the rounding, which can swap near-equal experts of a nearly uniform router in a sample or two)
    per_sample = mg.sample_consistency(log, cfg.top_k)
    assert per_sample.shape == (n, mix.n_groups, 4)
    assert np.median(np.abs(per_sample.mean(2) - log["consistency"])) < 0.01
    np.testing.assert_allclose(mg.sample_consistency(log, cfg.top_k, [n - 1])[0], per_sample[-1])
    t_fit = np.array([log["steps"][1]] * mix.n_groups, float)
    ci = mg.consistency_rise_interval(log, t_fit, [1, 2], cfg.top_k, n_resamples=300)
    from repro.common import centred_mean
    logged = min(centred_mean(log["consistency"][:, g])[-1] - centred_mean(log["consistency"][:, g])[1] for g in (1, 2))
    assert ci["low"] <= logged + 1e-9 and ci["low"] <= ci["high"] and ci["recompute_gap"] < 0.2
    assert np.isnan(mg.consistency_rise_interval(log, np.full(mix.n_groups, np.nan), [1], cfg.top_k)["low"])
    mg.save_log(tmp_path / "x.npz", {"main": log}, seed=0)
    back, prov = mg.load_log(tmp_path / "x.npz")
    assert prov["seed"] == 0 and {"command", "commit", "time"} <= set(prov)      # the provenance record
    np.testing.assert_allclose(back["main"]["test_acc"], log["test_acc"])


def test_variants_and_a_frozen_run():
    base = mg.GrokkingConfig(d_model=8, n_heads=2, d_expert=8, steps=3, n_evals=2, batch_size=16, n_monitor=4)
    assert mg.variant_config(base, "frozen").freeze_router and not base.freeze_router
    assert mg.variant_config(base, "no-balance").balance_coef == 0.0
    with pytest.raises(ValueError, match="variant"):
        mg.variant_config(base, "sparse")
    log = mg.train_monitored(make_grokking_mix(p=5, seed=0), mg.variant_config(base, "frozen"), seed=1)
    assert np.isfinite(log["consistency"]).all()


def test_dense_twin_has_the_active_width_and_no_routing_log():
    base = mg.GrokkingConfig(d_model=8, n_heads=2, d_expert=8, top_k=2, steps=3, n_evals=2, batch_size=16, n_monitor=4)
    dense = mg.variant_config(base, "dense")
    model_cfg = dense.model_config(vocab_size=12)
    assert model_cfg.n_experts == 0 and model_cfg.mlp_width == 16      # top_k * d_expert
    assert base.model_config(vocab_size=12).n_experts == base.n_experts
    mix = make_grokking_mix(p=5, seed=0)
    log = mg.train_monitored(mix, dense, seed=0)
    assert log["train_acc"].shape == (len(log["steps"]), mix.n_groups) and "pathway_distance" not in log


def _synthetic_log(pathway_rule, consistency_rule):
    """Three groups (0: control, 1 and 2: rules) at 7 evaluations, with curves chosen by hand."""
    steps = np.array([0, 10, 100, 1000, 2000, 4000, 8000])
    train = np.array([[0.0, 0.2, 0.96, 0.97, 0.98, 0.97, 0.98],         # control: never reaches 0.99
                      [0.0, 0.5, 0.96, 0.99, 1.0, 1.0, 1.0],
                      [0.0, 0.96, 1.0, 1.0, 1.0, 1.0, 1.0]]).T
    test = np.array([[0.03] * 7,
                     [0.0, 0.05, 0.1, 0.3, 0.6, 0.8, 0.95],              # onset at 2000: 20x its fitted step 100
                     [0.0, 0.6, 0.7, 0.8, 0.8, 0.8, 0.8]]).T             # onset at 10, as it fits
    flat = np.full(7, 0.5)
    return {"steps": steps, "train_acc": train, "test_acc": test,
            "pathway_distance": np.stack([flat, pathway_rule, flat], 1),
            "consistency": np.stack([flat, consistency_rule, flat], 1),
            "load_entropy": np.full((7, 2), np.log(4) * 0.9)}


def test_group_times_and_the_control_fallback():
    log = _synthetic_log(np.full(7, 0.5), np.full(7, 0.5))
    t = mg.group_times(log, control=0, chance=0.0)
    np.testing.assert_array_equal(t["t_fit"], [100, 100, 10])
    np.testing.assert_array_equal(t["t_mem"], [2000, 1000, 100])         # control: the step of its best train acc.
    assert t["generalizing"] == [1] and t["learners"] == [1, 2] and t["rules"] == [1, 2]
    np.testing.assert_array_equal(t["onset"][1:], [2000, 10])
    with pytest.raises(ValueError, match="control"):
        mg.group_times(log, control=3, chance=0.0)


def test_claim_quantities_on_hand_made_curves():
    falling = np.array([0.5, 0.5, 0.8, 0.8, 0.8, 0.4, 0.4])                # smoothed peak 0.8, end 0.4: drop 0.5
    rising = np.array([0.1, 0.1, 0.1, 0.1, 0.5, 0.5, 0.5])
    logs = {"main": _synthetic_log(falling, rising), "frozen": _synthetic_log(np.full(7, 0.5), np.full(7, 0.5))}
    q = mg.claim_quantities(logs, control=0, chance=0.0, n_experts=4)
    assert q["n_lag"] == 1 and q["onset_async"] == pytest.approx(200)
    assert q["n_grok"] == 1 and np.isnan(q["async_ratio"])               # 8000 / 1000; one group reaches 0.9
    assert q["drop"][1] == pytest.approx(0.5) and q["drop"][2] == 0 and q["drop_min"] == 0
    assert q["drop_mean"] == pytest.approx(0.25) and q["control_ratio"] == 0
    assert q["c_rise"][1] == pytest.approx(0.4) and q["frozen_move"] == 0 and q["frozen_drop_mean"] == 0
    assert q["load_frac"] == pytest.approx(0.9)
    logs["main"]["pathway_distance"][:, 1] = 0.5                         # no fall in the rules: no control ratio
    assert np.isnan(mg.claim_quantities(logs, control=0, chance=0.0, n_experts=4)["control_ratio"])
    with pytest.raises(ValueError, match="frozen"):
        mg.claim_quantities({"main": logs["main"]}, control=0, chance=0.0, n_experts=4)


def test_shipped_runs_match_the_library_defaults_and_carry_provenance():
    """The chapter reads data/moe-grokking/runs/seed<k>-<variant>.npz as the runs of GrokkingConfig() on
    DEFAULT_GROUPS: if the defaults change, the shipped files must be remade (see data/README.md)."""
    from dataclasses import asdict
    from pathlib import Path
    runs = Path(__file__).parents[2] / "data" / "moe-grokking" / "runs"
    assert mg.shipped_seeds(runs) == [0, 1, 2]
    for seed in (0, 1, 2):
        logs, provenance = mg.load_runs(runs, seed)
        for variant, prov in provenance.items():
            assert {"command", "seed", "variant", "commit", "time", "config", "groups", "seconds"} <= set(prov)
            assert prov["config"] == asdict(mg.GrokkingConfig()), f"seed {seed} {variant}: made with other settings"
            assert [tuple(g) for g in prov["groups"]] == list(DEFAULT_GROUPS) and prov["p"] == 31
            assert prov["seed"] == seed and prov["variant"] == variant
            assert logs[variant]["steps"][-1] == mg.GrokkingConfig().steps
        assert (runs / f"seed{seed}-main.npz").stat().st_size < 2e6


def test_a_seed_without_shipped_runs_gets_a_clear_error(tmp_path):
    from repro.moe_grokking import NoShippedRun, no_shipped_seed

    err = no_shipped_seed(tmp_path, 7, steps_per_s=20.0, n_runs=4, steps=8000)
    assert isinstance(err, NoShippedRun) and isinstance(err, FileNotFoundError)
    text = str(err)
    assert "seed=7" in text and "shipped seeds: none" in text and "about 27 minutes" in text and 'scale="full"' in text
    assert err._render_traceback_() and "Traceback" not in err._render_traceback_()[0]


def test_cumulative_experts_keeps_the_fewest_reaching_the_mass():
    from repro.moe_grokking import cumulative_experts
    probs = np.array([[0.5, 0.3, 0.15, 0.05], [0.8, 0.1, 0.05, 0.05], [0.25, 0.25, 0.25, 0.25]])
    keep = cumulative_experts(probs, 0.7)
    assert keep.tolist() == [[True, True, False, False], [True, False, False, False], [True, True, True, False]]
    assert cumulative_experts(probs, 1.0).sum() == 12
    with pytest.raises(ValueError, match="mass"):
        cumulative_experts(probs, 0.0)


def test_paper_pathway_distance_is_raw_levenshtein_of_variable_length_paths():
    from repro.moe_grokking import paper_pathway_distance, paper_pathway_strings
    one_hot = np.eye(4)
    # two samples, one layer, one token: sample 0 keeps expert 0 only, sample 1 keeps experts 1 and 2
    probs = np.stack([one_hot[0], [0.0, 0.5, 0.4, 0.1]])[:, None, None, :]
    s = paper_pathway_strings(probs, 0.7)
    assert [len(x) for x in s] == [1, 2]
    assert paper_pathway_distance(probs, 0.7) == 2.0          # substitute one symbol, insert one
    same = np.repeat(probs[:1], 3, axis=0)
    assert paper_pathway_distance(same, 0.7) == 0.0


def test_paper_consistency_is_zero_for_aligned_layers_and_grows_when_erratic():
    from repro.moe_grokking import paper_consistency
    W = np.stack([np.eye(2), np.eye(2)])                   # two layers, two experts, d = 2: expert rows e1, e2
    aligned = np.array([[[[1.0, 0.0]], [[1.0, 0.0]]]])     # (N=1, L=2, T=1, E=2): the same expert in both layers
    turned = np.array([[[[1.0, 0.0]], [[0.0, 1.0]]]])      # orthogonal experts: cos 0, C = 0.5
    assert paper_consistency(aligned, W)[0] == pytest.approx(0.0)
    assert paper_consistency(turned, W)[0] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="probs"):
        paper_consistency(aligned[0], W)


def _rule_log(fit_steps, rule_steps, steps=(0, 100, 200, 400, 800, 1600, 3200)):
    """A log whose rule group g (1..) reaches train acc. 1 at fit_steps[g-1] and test acc. 1 at rule_steps[g-1]
    (None: never); group 0 is the control."""
    steps = np.array(steps)
    n = len(fit_steps) + 1
    train, test = np.zeros((steps.size, n)), np.zeros((steps.size, n))
    for g, (f, r) in enumerate(zip(fit_steps, rule_steps), start=1):
        train[:, g] = steps >= f
        test[:, g] = steps >= r if r is not None else 0.0
    return {"steps": steps, "train_acc": train, "test_acc": test}


def test_lag_correlation_ranks_later_fitted_groups_against_their_lags():
    later_lags_longer = mg.lag_correlation(_rule_log([100, 200, 400], [200, 800, None]), control=0)
    np.testing.assert_array_equal(later_lags_longer["lag"], [100, 600, np.inf])   # never: lags longest
    assert later_lags_longer["rho"] == pytest.approx(1.0)
    assert mg.lag_correlation(_rule_log([100, 200, 400], [1600, 800, 800]), control=0)["rho"] == pytest.approx(-1.0)
    assert np.isnan(mg.lag_correlation(_rule_log([100, 200], [200, 400]), control=0)["rho"])   # two groups: no rho


def test_monitor_correlations_are_pearson_after_the_start():
    steps = np.array([0, 10, 20, 30, 40, 50])
    acc = np.array([0.9, 0.1, 0.2, 0.4, 0.6, 0.8])                      # the first checkpoint is left out below
    r = mg.monitor_correlations(steps, acc, {"down": -acc, "flat": np.ones(6), "short": acc}, start=10)
    assert r["down"] == pytest.approx(-1.0) and np.isnan(r["flat"])
    assert np.isnan(mg.monitor_correlations(steps, acc, {"x": acc}, start=40)["x"])       # 2 points < min_points
    with pytest.raises(ValueError, match="shape"):
        mg.monitor_correlations(steps, acc, {"bad": acc[:3]}, start=0)


def test_claim_quantities_read_the_papers_metrics_when_a_log_carries_them():
    falling = np.array([0.5, 0.5, 0.8, 0.8, 0.8, 0.4, 0.4])
    logs = {"main": _synthetic_log(falling, falling), "frozen": _synthetic_log(falling, falling)}
    assert "paper_drop_min" not in mg.claim_quantities(logs, control=0, chance=0.0, n_experts=4)
    test = logs["main"]["test_acc"]
    logs["main"].update(paper_distance=np.stack([np.full(7, 20.0), 20 - 10 * test[:, 1], np.full(7, 20.0)], 1),
                        paper_consistency=np.stack([np.full(7, 0.3), 0.3 + test[:, 1], 0.3 - test[:, 2]], 1))
    q = mg.claim_quantities(logs, control=0, chance=0.0, n_experts=4)
    assert q["table1_r"][1]["distance"] == pytest.approx(-1.0) and q["table1_r"][1]["ci"] == pytest.approx(1.0)
    assert q["table1_ci"] == pytest.approx(-1.0)             # group 2's C_i falls as its test accuracy rises
    assert q["paper_drop"][2] == 0 and q["paper_drop_min"] == 0 and q["paper_drop"][1] > 0.3
    assert np.isnan(q["lag_rho"])                             # two rule groups: too few for a rank correlation


def test_add_paper_curves_on_a_logged_run():
    cfg = mg.GrokkingConfig(n_layers=2, n_experts=4, d_expert=8, d_model=16, n_heads=2, steps=3, n_evals=2,
                            n_monitor=4, batch_size=16)
    logs = {"main": mg.train_monitored(make_grokking_mix(p=5, seed=0), cfg, seed=0)}
    mg.add_paper_curves(logs)
    n_evals, n_groups = logs["main"]["test_acc"].shape
    for key in ("paper_distance", "paper_consistency", "paper_length"):
        assert logs["main"][key].shape == (n_evals, n_groups)
    assert np.all(logs["main"]["paper_length"] >= cfg.n_layers * 3)      # at least one expert per token and layer


def test_one_file_per_run_loads_back_and_a_missing_seed_says_so(tmp_path):
    log = {"steps": np.array([0, 10]), "test_acc": np.zeros((2, 3))}
    for v in (*mg.SHIPPED_VARIANTS, "dense"):                          # an optional run shipped beside the required
        mg.save_log(mg.run_file(tmp_path, 3, v), {v: log}, command="test", seed=3, variant=v)
    mg.save_log(mg.run_file(tmp_path, 4, "main"), {"main": log}, command="test", seed=4, variant="main")
    assert mg.shipped_seeds(tmp_path) == [3] and mg.shipped_seeds(tmp_path, variants=("main",)) == [3, 4]
    logs, prov = mg.load_runs(tmp_path, 3)
    assert set(logs) == {*mg.SHIPPED_VARIANTS, "dense"} and prov["frozen"]["variant"] == "frozen"
    np.testing.assert_array_equal(logs["dense"]["steps"], [0, 10])
    with pytest.raises(mg.NoShippedRun, match="seed4-frozen.npz"):
        mg.load_runs(tmp_path, 4)
    err = mg.no_shipped_seed(tmp_path, 7, steps_per_s=10.0, n_runs=4, steps=12000)
    assert "shipped seeds: 3" in str(err) and "80 minutes" in str(err)
