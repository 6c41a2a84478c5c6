"""Unit tests of repro.timeseg (chapters/timeseg/): the reward, masking, termination, the policy's
action masks, PPO on a bandit with a known optimum, the oracle, the baselines and the metrics."""
import numpy as np
import pytest
import torch

from repro.timeseg.ppo import PPOConfig, masked_categorical, ppo_losses, ppo_update, td_advantages
from repro.timeseg.agent import SegmentPolicy, TimeSegConfig, explain, rollout, train_timeseg
from repro.timeseg.baselines import lime_patches, random_segments, top_k_mask
from repro.timeseg.blackbox import TCN
from repro.timeseg.data import lowvar, seqcomb
from repro.timeseg.env import (boundaries, count_segments, mean_fill, objective, segment_mask, step_reward,
                               terminates)
from repro.timeseg.metrics import f1_iou, validity
from repro.timeseg.oracle import candidate_segments, greedy_oracle


def test_mean_fill_keeps_masked_steps_and_fills_the_rest_with_the_series_mean():
    x = torch.tensor([[1.0, 2.0, 3.0, 6.0]])
    m = torch.tensor([[True, False, False, True]])
    assert torch.allclose(mean_fill(x, m), torch.tensor([[1.0, 3.0, 3.0, 6.0]]))
    with pytest.raises(ValueError, match="mask"):
        mean_fill(x, m[:, :3])


def test_reward_is_the_likelihood_gain_minus_the_length_penalty():
    ce_new, ce_old, seg = torch.tensor([0.5]), torch.tensor([1.0]), torch.tensor([10])
    r = step_reward(ce_new, ce_old, seg, 100, 0.3)
    assert torch.allclose(r, torch.exp(-ce_new) - torch.exp(-ce_old) - 0.03)
    first = step_reward(ce_new, None, seg, 100, 0.3)           # the code drops the subtracted term at k = 1
    assert torch.allclose(first, torch.exp(-ce_new) - 0.03)
    log = step_reward(ce_new, ce_old, seg, 100, 0.3, log_reward=True)
    assert torch.allclose(log, torch.tensor([0.5 - 0.03]))


def test_rewards_telescope_to_the_objective():
    torch.manual_seed(0)
    model = TCN(3, channels=4, blocks=1).eval()
    x = torch.randn(2, 40)
    target = torch.softmax(model(x), -1)
    segs = [(2, 9), (20, 25), (30, 31)]
    m = torch.zeros(2, 40, dtype=torch.bool)
    total, ce_old = torch.zeros(2), None
    from repro.timeseg.env import cross_entropy_on
    for s, e in segs:
        new = m | segment_mask(torch.tensor([s, s]), torch.tensor([e, e]), 40)
        ce = cross_entropy_on(model, x, new, target)
        total += step_reward(ce, ce_old, torch.tensor([e - s + 1] * 2), 40, 0.3)
        m, ce_old = new, ce
    assert torch.allclose(total, objective(model, x, m, target, 0.3), atol=1e-6)


def test_termination_rule():
    ce_old, ce_new = torch.tensor([1.0, 1.0]), torch.tensor([0.9, 0.5])
    assert terminates(ce_new, ce_old, 2, 4, 0.3).tolist() == [True, False]   # gains 0.1 and 0.5 against τ = 0.3
    assert not terminates(ce_new, None, 1, 4, 0.3).any()                     # step 1 never ends the episode...
    assert terminates(ce_new, ce_old, 4, 4, 0.3).all()                       # ...K_max always does


def test_policy_segments_are_valid_and_never_overlap():
    torch.manual_seed(1)
    pol = SegmentPolicy(8)
    x = torch.randn(64, 30)
    m = torch.zeros(64, 30, dtype=torch.bool)
    m[:, 10:15] = True
    for _ in range(5):
        s, e, lp, ent = pol(x, m)
        assert (s <= e).all() and not m.gather(1, s[:, None]).any()
        assert not (segment_mask(s, e, 30) & m).any()
        assert torch.isfinite(lp).all() and (ent >= 0).all()
    s2, e2, lp2, _ = pol(x, m, s, e)                     # re-scoring the stored actions
    assert torch.equal(s2, s) and torch.equal(e2, e)


def test_masked_categorical_forbids_and_argmaxes():
    logits = torch.tensor([[5.0, 1.0, 0.0]])
    allowed = torch.tensor([[False, True, True]])
    a, lp, ent = masked_categorical(logits, allowed, "argmax")
    assert a.item() == 1 and lp.item() == pytest.approx(float(torch.log_softmax(torch.tensor([1.0, 0.0]), 0)[0]))
    with pytest.raises(ValueError, match="allowed"):
        masked_categorical(logits, torch.zeros(1, 3, dtype=torch.bool))


def test_td_advantages_one_step_and_monte_carlo():
    r = torch.tensor([[1.0], [2.0]])
    v = torch.tensor([[0.5], [0.25]])
    nv = torch.tensor([[0.25], [0.0]])
    d = torch.tensor([[False], [True]])
    a0, t0 = td_advantages(r, v, nv, d, gamma=0.5, gae_lambda=0.0)
    assert torch.allclose(a0[:, 0], torch.tensor([1 + 0.5 * 0.25 - 0.5, 2 - 0.25]))
    a1, _ = td_advantages(r, v, nv, d, gamma=0.5, gae_lambda=1.0)
    assert torch.allclose(a1[:, 0], torch.tensor([1 + 0.5 * 2 - 0.5, 2 - 0.25]))   # return minus value
    with pytest.raises(ValueError, match="alive"):
        td_advantages(r, v, nv, d, alive=torch.ones(3, 1))


def test_ppo_finds_the_optimum_of_a_factorised_bandit():
    """A two-factor bandit: a1 in 3 choices, a2 | a1 in 4; reward 1 only for (2, 1). PPO must find it."""
    torch.manual_seed(0)
    la = torch.zeros(3, requires_grad=True)
    lb = torch.zeros(3, 4, requires_grad=True)
    v = torch.zeros(1, requires_grad=True)
    params = [la, lb, v]
    opt = torch.optim.Adam(params, lr=0.05)
    cfg = PPOConfig(minibatch=64, gamma=0.0)
    ones = torch.ones(256, 3, dtype=torch.bool)
    for _ in range(40):
        a1, lp1, _ = masked_categorical(la.detach().expand(256, 3), ones)
        a2, lp2, _ = masked_categorical(lb.detach()[a1], ones[:, :1].expand(256, 4))
        rew = ((a1 == 2) & (a2 == 1)).float()
        adv, tgt = td_advantages(rew[None], v.detach().expand(1, 256), torch.zeros(1, 256),
                                 torch.ones(1, 256, dtype=torch.bool), gamma=0.0)
        batch = {"old_log_prob": lp1 + lp2, "advantages": adv[0], "targets": tgt[0], "a1": a1, "a2": a2}

        def evaluate(j):
            _, l1, h1 = masked_categorical(la.expand(len(j), 3), ones[j], batch["a1"][j])
            _, l2, h2 = masked_categorical(lb[batch["a1"][j]], ones[j][:, :1].expand(len(j), 4), batch["a2"][j])
            return l1 + l2, h1 + h2, v.expand(len(j))

        ppo_update(evaluate, opt, params, batch, cfg)
    p_opt = (torch.softmax(la, 0)[2] * torch.softmax(lb[2], 0)[1]).detach()
    assert float(p_opt) > 0.9
    assert float(v.detach()) == pytest.approx(float(p_opt), abs=0.15)


def test_ppo_loss_is_clipped():
    cfg = PPOConfig()
    old = torch.zeros(2)
    new = torch.tensor([1.0, 1.0])                       # ratio e ≈ 2.72, clipped to 1.2 for a positive advantage
    out = ppo_losses(new, old, torch.tensor([1.0, 1.0]), torch.zeros(2), torch.zeros(2), torch.zeros(2), cfg)
    assert out["policy"].item() == pytest.approx(-1.2)
    assert out["clip_fraction"].item() == 1.0
    with pytest.raises(ValueError, match="clip"):
        PPOConfig(clip=1.5)


def test_training_and_explanations_run_and_obey_the_rules():
    """A few PPO iterations of the chapter's own code path: the shipped policies cannot rot."""
    torch.manual_seed(0)
    data = seqcomb(64, 40, seed=3)
    model = TCN(3, channels=4, blocks=1).eval()
    cfg = TimeSegConfig(iterations=2, episodes=16, hidden=4)
    pol, critic, log = train_timeseg(model, data.x, cfg, seed=0)
    assert len(log.returns) == 2 and log.transitions >= 32
    ex = explain(pol, model, data.x[:10], cfg)
    v = validity(ex.segments, ex.mask, cfg.k_max)
    assert sum(v.values()) == 0
    assert (count_segments(ex.mask) <= cfg.k_max - 1).all()
    ep = rollout(pol, model, torch.as_tensor(data.x[:10]), cfg, greedy=True)
    assert torch.equal(ep.kept, ex.mask)


def test_generators_have_the_advertised_truth():
    s = seqcomb(50, 100, seed=0)
    assert s.x.shape == (50, 100) and set(np.unique(s.y)) <= {0, 1, 2}
    assert (count_segments(torch.as_tensor(s.truth)) == 2).all()
    lv = lowvar(50, 100, seed=0)
    assert (lv.truth.sum(1) == 20).all()
    assert lv.x[lv.truth].std() < 0.2 < lv.x[~lv.truth].std()


def test_metrics_and_masks():
    t = torch.tensor([[0, 1, 1, 0], [1, 1, 0, 0]], dtype=torch.bool)
    p = torch.tensor([[0, 1, 0, 0], [0, 0, 1, 1]], dtype=torch.bool)
    f1, iou = f1_iou(p, t)
    assert f1.tolist() == pytest.approx([2 / 3, 0.0]) and iou.tolist() == pytest.approx([0.5, 0.0])
    assert boundaries(t).tolist() == [2, 1] and count_segments(t).tolist() == [1, 1]
    assert top_k_mask(torch.tensor([[0.1, 0.9, 0.5, 0.2]]), torch.tensor([2])).tolist() == [[False, True, True, False]]
    r = random_segments([[(0, 4), (10, 12)]], 30, seed=0)
    assert r.sum() == 8 and count_segments(r).item() <= 2


def test_oracle_finds_the_planted_segment():
    """A 'black box' that only looks at steps 10..19: the oracle keeps steps there and nowhere else."""
    class Window(torch.nn.Module):
        def forward(self, x):
            s = x[:, 10:20].mean(-1)
            return torch.stack([4 * s, -4 * s], -1)

    x = torch.zeros(3, 40)
    x[:, 10:20] = 1.0
    masks, n_seg, j, sec = greedy_oracle(Window(), x, lam=0.3, max_segments=3, stride=5)
    assert masks[:, 10:20].any(1).all() and not masks[:, :10].any() and not masks[:, 20:].any()
    assert (n_seg >= 1).all() and (j > 0.5).all()
    assert len(candidate_segments(40, 5)) == 8 * 9 // 2


def test_lime_recovers_an_additive_patch_effect():
    class Additive(torch.nn.Module):
        def forward(self, x):
            s = x[:, 20:30].sum(-1) - x[:, :10].sum(-1)
            return torch.stack([0.1 * s, -0.1 * s], -1)

    x = torch.zeros(2, 40)
    x[:, 20:30] = 1.0
    x[:, 0:10] = -1.0
    a = lime_patches(Additive(), x, torch.zeros(2, dtype=torch.long), patch=10, n_samples=300)
    assert (a[:, 25] > a[:, 35]).all() and (a[:, 5] > a[:, 35]).all()


def test_shipped_models_round_trip(tmp_path):
    from repro.timeseg.shipped import load_models, save_models

    torch.manual_seed(0)
    models = {"blackbox": {"seqcomb": TCN(3, channels=4, blocks=1).eval()},
              "policy": {"seqcomb-lam0.3": SegmentPolicy(TimeSegConfig().hidden).eval()},
              "logs": {"seqcomb-lam0.3": {"returns": [0.1]}}, "accuracy": {"seqcomb": 0.5}, "seconds": {}}
    path = save_models(models, 5, tmp_path / "m.pt")
    back = load_models(5, path)
    x = torch.randn(3, 40)
    assert torch.allclose(back["blackbox"]["seqcomb"](x), models["blackbox"]["seqcomb"](x))
    assert back["provenance"]["seed"] == 5 and "commit" in back["provenance"]
    with pytest.raises(FileNotFoundError, match="scale='full'"):
        load_models(5, tmp_path / "missing.pt")


def test_paired_bootstrap_of_means_and_auroc_drops():
    from repro.timeseg.metrics import auroc_drop, bootstrap_auroc_drops, bootstrap_means, resamples
    torch.manual_seed(0)
    model = TCN(2, channels=4, blocks=1).eval()
    x, y = torch.randn(40, 30), np.arange(40) % 2
    masks = {"a": torch.rand(40, 30) > 0.5, "b": torch.rand(40, 30) > 0.7}
    whole = np.arange(40)[None]                               # the one "resample" that is the sample itself
    for keep in (True, False):
        drops = bootstrap_auroc_drops(model, x, y, masks, whole, keep=keep)
        for name, m in masks.items():
            assert drops[name][0] == pytest.approx(auroc_drop(model, x, y, m, keep=keep), abs=1e-9)
    draws = resamples(40, seed=3, n_resamples=50)
    assert draws.shape == (50, 40) and draws.max() < 40
    assert np.array_equal(draws, resamples(40, seed=3, n_resamples=50))
    means = bootstrap_means({"v": torch.arange(40.0)}, draws)
    assert np.allclose(means["v"], draws.mean(1))
    with pytest.raises(ValueError, match="n must"):
        resamples(1, seed=0)
    with pytest.raises(ValueError, match="two classes"):
        bootstrap_auroc_drops(model, x, np.arange(40) % 3, masks, whole)


def test_removal_window_finds_the_window_the_black_box_reads():
    from repro.timeseg.baselines import removal_window

    class Window(torch.nn.Module):                # class 1's logit is the mean of steps 10..19
        def forward(self, x):
            s = x[:, 10:20].mean(-1)
            return torch.stack([-s, s], -1)

    x = torch.zeros(2, 40)
    x[:, 10:20] = 5.0
    m = removal_window(Window(), x, torch.tensor([1, 1]), torch.tensor([10, 4]), pieces=2)
    assert m.sum(-1).tolist() == [10, 4] and bool(m[:, :10].sum() == 0) and bool(m[:, 20:].sum() == 0)
    with pytest.raises(ValueError, match="budget"):
        removal_window(Window(), x, torch.tensor([1, 1]), torch.tensor([0, 4]))
