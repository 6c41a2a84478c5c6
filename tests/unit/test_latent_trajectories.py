"""Unit tests of repro.latent_trajectories (chapters/latent-trajectories)."""
import numpy as np
import pandas as pd
import pytest
import torch

from repro import latent_trajectories as lt
from repro.latent_trajectories import selection as sel
from repro.latent_trajectories import signals as sg
from repro.latent_trajectories.traces import PAD


def line(N, step=0.5, d=6, layers=3):
    e = np.zeros(d); e[0] = 1
    return np.stack([[n * step * e for n in range(N)]] * layers)


# ------------------------------------------------------------------ signals
def test_straight_line_closed_forms():
    s = sg.lt_signals(line(7, step=0.5))
    assert s["aligned"] == pytest.approx(1.0)
    assert s["net"] == pytest.approx(0.5)
    assert s["cum"] == pytest.approx(6 * 0.5)


def test_back_and_forth_zigzag():
    a, b = np.zeros(4), np.array([0.0, 2.0, 0, 0])
    h = np.stack([[a if n % 2 == 0 else b for n in range(12)]])      # N = 12, even: drift = b - a
    s = sg.lt_signals(h)
    assert s["aligned"] == pytest.approx(1 / 11) and s["aligned"] <= 0.1
    assert s["net"] == pytest.approx(2 / 11)
    assert s["cum"] == pytest.approx(11 * 2)


def test_zigzag_with_progress_closed_form():
    a, b, N = 1.0, 0.75, 9
    h = np.array([[[n * a, (-1) ** (n + 1) * b] for n in range(N)]])
    assert sg.lt_signals(h)["aligned"] == pytest.approx(a / np.sqrt(a ** 2 + 4 * b ** 2))


def test_agrees_with_port_of_official_code():
    rng = np.random.default_rng(0)
    for _ in range(50):
        h = rng.normal(size=(3, rng.integers(2, 9), 5))
        ours, ref = sg.lt_signals(h), sg.reference_lt_signals(h)
        assert ours["net"] == pytest.approx(np.mean(ref["net_change"]), abs=1e-6)
        assert ours["cum"] == pytest.approx(np.mean(ref["cumulative_change"]), abs=1e-6)
        assert ours["aligned"] == pytest.approx(np.mean(ref["aligned_change"]), abs=1e-6)


def test_one_segment_gives_nan_and_bad_shape_raises():
    assert np.isnan(sg.lt_signals(np.zeros((2, 1, 3)))["net"])
    with pytest.raises(ValueError, match="states"):
        sg.lt_signals(np.zeros((3, 4)))


def test_step_signals_end_at_full_signals():
    h = np.random.default_rng(1).normal(size=(2, 6, 4))
    st, full = sg.step_signals(h), sg.lt_signals(h)
    assert st["net_by_step"][-1] == pytest.approx(full["net"])
    assert st["cum_by_step"][-1] == pytest.approx(full["cum"])


def test_segment_means_follow_newlines():
    words = ["Q", "1", "+", "2", "NL", "1", "+", "2", "=", "3", "NL", "3", "+", "0", "=", "3", "NL", "ANS", "3"]
    tok = np.array(lt.encode(words))
    hidden = np.arange(len(tok), dtype=float)[None, :, None] * np.ones((1, 1, 2))
    seg = sg.segment_means(hidden, tok, prompt_len=5)
    np.testing.assert_allclose(seg[0, :, 0], [np.mean(range(4, 10)), np.mean(range(10, 16))])


def test_layer_baselines_of_a_straight_layer_path():
    h = np.stack([line(4, step=1.0, layers=1)[0] + k for k in range(3)])   # layers move along all axes equally
    b = sg.layer_baselines(h)
    assert b["layer_mag"] == pytest.approx(0.5)


# ------------------------------------------------------------------ language and model
def test_teacher_traces_are_consistent():
    rng = np.random.default_rng(0)
    tokens, mask, right = lt.teacher_batch(300, lt.Teacher(), rng)
    assert 0.2 < 1 - right.mean() < 0.45
    assert (mask & (tokens == PAD)).sum() == 0
    clean = lt.Teacher(p_wrong=0.0, p_verify=0.0)
    _, _, right = lt.teacher_batch(50, clean, rng)
    assert right.all()
    with pytest.raises(ValueError, match="p_wrong"):
        lt.Teacher(p_wrong=1.5)


def test_sampler_and_forward_agree_and_train_runs():
    torch.manual_seed(0)
    model, info = lt.train_reasoner(3, batch_size=8, cfg=lt.model_config(d_model=32, n_layers=2))
    assert len(info["loss"]) == 3
    qs = lt.draw_questions(4, np.random.default_rng(0))
    s = lt.sample_questions(model, qs, k=2, seed=0, max_len=40)
    assert s.tokens.shape == (8, 40)
    # with a cache, the sampler's last-position logits must equal the full forward pass at that position
    g = torch.Generator().manual_seed(1)
    toks = torch.tensor([lt.encode(lt.question_words(qs[0]))])
    out = lt.sample(model, toks, [toks.shape[1]], temperature=1e-4, max_len=toks.shape[1] + 3, generator=g)
    with torch.no_grad():
        greedy = model(out[:, :-1]).logits[0, -1].argmax()
    assert int(out[0, -1]) in (int(greedy), PAD)


# ------------------------------------------------------------------ selection
def test_majority_vote_and_sequential():
    answers = np.array([[1, 2, 2, 3, 2], [4, 5, 6, 7, 8]])
    correct = np.array([[0, 1, 1, 0, 1], [0, 0, 0, 0, 1]], dtype=bool)
    np.testing.assert_array_equal(sel.majority_vote(answers, correct), [True, False])
    values = np.array([[0.1, 0.9, 0, 0, 0], [0, 0, 0, 0, 0]], dtype=float)
    tokens = np.full((2, 5), 10.0)
    r = sel.sequential(values, 0.5, correct, answers, tokens)
    assert r["accuracy"] == 0.5 and r["tokens"] == 20 + 50 and r["accepted"] == 0.5


def test_combined_signal_weights_and_auc():
    rng = np.random.default_rng(0)
    y = rng.random(400) < 0.5
    rows = pd.DataFrame({"correct": y, "net": y + rng.normal(size=400), "cum": -1.0 * y + rng.normal(size=400),
                         "aligned": rng.normal(size=400)})
    c = sel.combined_signal(rows, rng.random(400) < 0.3)
    assert sel.auc(y, c) > 0.7
    with pytest.raises(ValueError, match="calibration"):
        sel.combined_signal(rows, np.zeros(400, dtype=bool))


def test_make_checkpoint_round_trip(tmp_path):
    from repro.nn import load_checkpoint
    path = tmp_path / "r.pt"
    model, info = lt.make_checkpoint(path, steps=2, seed=0, batch_size=4, save_every=1,
                                     cfg=lt.model_config(d_model=16, n_layers=2, n_heads=2))
    loaded, prov = load_checkpoint(path)
    assert prov["steps"] == 2 and "make_checkpoint" in prov["command"]
    for a, b in zip(model.state_dict().values(), loaded.state_dict().values()):
        assert torch.equal(a, b)


def test_early_selection_and_calibration_run():
    rng = np.random.default_rng(0)
    n_q, k = 30, 5
    rows = pd.DataFrame({"question": np.repeat(np.arange(n_q), k), "repeat": np.tile(np.arange(k), n_q),
                         "correct": rng.random(n_q * k) < 0.5, "think_tokens": rng.integers(20, 60, n_q * k)})
    steps = [{"net_by_step": rng.random(3), "cum_by_step": np.cumsum(rng.random(3)), "tokens_read": np.array([8, 14, 20])}
             for _ in range(n_q * k)]
    r = sel.early_forest(rows, steps, K=2, n_trees=5)
    assert 0 <= r["accuracy"] <= 1 and 0 < r["saved"] < 1
    segs = [rng.normal(size=(2, 4, 3)) for _ in range(n_q * k)]
    assert 0 <= sel.early_consistency(rows, segs, steps, K=2)["accuracy"] <= 1
    C = sel.grid(rows, "correct").astype(bool)
    A = np.where(C, 1, 2)
    T = sel.grid(rows, "think_tokens").astype(float)
    out = sel.cross_validated(rng.random((n_q, k)), C, A, T)
    assert 0 < out["tokens"] <= 1
    items = out["items"]
    assert len(items["question"]) == len(items["correct"]) == 3 * round(0.7 * n_q)
    assert abs(items["correct"].mean() - out["accuracy"]) < 1e-12          # equal folds: item mean = fold mean


def test_bootstraps_over_questions():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(3)
    y = rng.random(200) < 0.6
    s = np.round(rng.normal(size=200) + y, 1)                               # rounded: ties
    w = np.ones((2, 200))
    assert np.allclose(sel._weighted_auc(y, s, w), roc_auc_score(y, s))
    w2 = rng.integers(0, 3, size=(1, 200)).astype(float)
    rep = np.repeat(np.arange(200), w2[0].astype(int))
    assert np.isclose(sel._weighted_auc(y, s, w2)[0], roc_auc_score(y[rep], s[rep]))
    questions = np.repeat(np.arange(40), 5)
    reps = sel.auc_replicates(y, [s, -s, np.where(np.arange(200) % 7 == 0, np.nan, s)], questions, n_resamples=300)
    assert reps.shape == (300, 3) and np.allclose(reps[:, 0] + reps[:, 1], 1)
    assert abs(np.median(reps[:, 0]) - roc_auc_score(y, s)) < 0.03
    mean, lo, hi = sel.question_bootstrap_ci(y.astype(float), questions, n_resamples=500)
    assert lo < mean < hi and abs(mean - y.mean()) < 1e-12
    mean, lo, hi = sel.question_bootstrap_ci(np.ones(200), questions)
    assert mean == lo == hi == 1
    with pytest.raises(ValueError, match="at least 2 questions"):
        sel.question_bootstrap_ci(np.ones(5), np.zeros(5))
