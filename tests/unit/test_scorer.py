"""Unit tests of repro.scorer (chapters/scorer): losses, gradient routing, shift invariance, batching, diagnostics."""
import numpy as np
import pytest
import torch

from repro import scorer
from repro.common import thread_limit


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny batched matmuls are fastest, and reproducible, on one thread (the same rule as `repro.scorer.train`)."""
    with thread_limit(1, blas=False):
        yield


def _setup(kinds, seeds=None, **kw):
    seeds = list(range(len(kinds))) if seeds is None else seeds
    net = scorer.QNetwork(seeds, obs_dim=4, n_actions=2)
    upd = scorer.ScorerUpdate(kinds, **kw)
    upd.bind(net)
    g = torch.Generator().manual_seed(0)
    G, B = len(kinds), 32

    def batch():
        return scorer.Batch(obs=torch.randn(G, B, 4, generator=g), action=torch.randint(0, 2, (G, B), generator=g),
                        reward=torch.ones(G, B), next_obs=torch.randn(G, B, 4, generator=g),
                        terminated=(torch.rand(G, B, generator=g) < 0.1).float())
    return net, upd, batch


def test_msbe_is_variance_plus_squared_mean():
    d = np.array([1.0, -2.0, 0.5, 3.0])
    m, v, b = scorer.msbe_decomposition(d)
    assert m == pytest.approx(v + b) and m == pytest.approx(14.25 / 4) and b == pytest.approx(0.625 ** 2)
    t = torch.from_numpy(np.stack([d, d + 1.0]))
    torch.testing.assert_close(scorer.msbe(t), scorer.bellman_variance(t) + t.mean(-1) ** 2)
    with pytest.raises(ValueError, match="delta"):
        scorer.msbe_decomposition(np.zeros((2, 2)))


def test_leader_step_leaves_the_encoder_bitwise_and_follower_step_the_head():
    net, upd, batch = _setup(["scorer", "scorer-msbe", "dqn"])
    target = net.snapshot()
    enc0, head0 = net.snapshot()
    upd.leader_step(net, target, batch(), 0.99)
    assert torch.equal(net.enc[:2], enc0[:2])                 # SCORER groups: encoder untouched by the leader
    assert not torch.equal(net.enc[2], enc0[2])               # DQN group: a full update moves its encoder
    assert not torch.equal(net.head, head0)
    enc1, head1 = net.snapshot()
    upd.follower_step(net, target, batch(), 0.99)
    assert torch.equal(net.head, head1)                       # the follower never moves the Q-head
    assert torch.equal(net.enc[2], enc1[2])                   # nor a DQN group's encoder
    assert not torch.equal(net.enc[:2], enc1[:2])


def test_follower_loss_is_shift_invariant_and_msbe_is_not():
    net, _, batch = _setup(["scorer"])
    target, b = net.snapshot(), batch()
    with torch.no_grad():
        before_var = scorer.follower_loss(net, target, b, 0.99, "variance").item()
        before_msbe = scorer.follower_loss(net, target, b, 0.99, "msbe").item()
        net.output_bias().add_(5.0)                           # Q -> Q + 5 for the online net, not the target
        after_var = scorer.follower_loss(net, target, b, 0.99, "variance").item()
        after_msbe = scorer.follower_loss(net, target, b, 0.99, "msbe").item()
    assert abs(after_var - before_var) < 1e-5 * max(1.0, before_var)
    assert after_msbe - before_msbe > 1.0
    with pytest.raises(ValueError, match="kind"):
        scorer.follower_loss(net, target, b, 0.99, "huber")


def test_two_learning_rates_and_validation():
    upd = scorer.ScorerUpdate(["dqn", "scorer"], lr_leader=1e-4, lr_follower=3e-4, lr_dqn=1e-3)
    assert upd.lr_head.tolist() == pytest.approx([1e-3, 1e-4]) and upd.lr_enc.tolist() == pytest.approx([1e-3, 3e-4])
    same = scorer.ScorerUpdate(["dqn", "scorer"], lr_leader=1e-4, lr_follower=3e-4, lr_dqn=1e-4, lr_dqn_encoder=3e-4)
    assert same.lr_head.tolist() == pytest.approx([1e-4, 1e-4]) and same.lr_enc.tolist() == pytest.approx([3e-4, 3e-4])
    with pytest.raises(ValueError, match="lr_dqn_encoder"):
        scorer.ScorerUpdate(["dqn"], lr_dqn_encoder=-1.0)
    with pytest.raises(ValueError, match="kinds"):
        scorer.ScorerUpdate(["ppo"])
    with pytest.raises(ValueError, match="lr_leader"):
        scorer.ScorerUpdate(["scorer"], lr_leader=0)
    with pytest.raises(ValueError, match="leader_every"):
        scorer.ScorerUpdate(["scorer"], leader_every=0)
    net = scorer.QNetwork([0, 1, 2], 4, 2)
    with pytest.raises(ValueError, match="groups"):
        upd.bind(net)


def test_leader_every_k_skips_leader_steps():
    net, upd, batch = _setup(["scorer"], leader_every=2)
    target = net.snapshot()
    upd(net, target, [batch(), batch()], 0.99)                # update 0: the leader steps
    head = net.head.detach().clone()
    upd(net, target, [batch(), batch()], 0.99)                # update 1: only the follower
    assert torch.equal(net.head, head)


def _train(seeds, kinds, steps=700):
    cfg = scorer.DQNConfig(total_steps=steps, envs_per_group=2, buffer_size=steps, learning_starts=200,
                       target_every=100, eps_decay_steps=300, log_every=50, n_probe=8)
    return scorer.train(cfg, seeds, scorer.ScorerUpdate(kinds))


def test_a_seed_trains_the_same_alone_and_inside_a_batch():
    alone = _train([1], ["scorer"])
    batch = _train([0, 1, 1], ["dqn", "scorer", "scorer-msbe"])
    np.testing.assert_allclose(batch.stats["delta_var"][:, 1], alone.stats["delta_var"][:, 0], rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(batch.net.head[1], alone.net.head[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(batch.episodes[1], alone.episodes[0])


def test_diagnostics_shapes_and_hand_values():
    snaps = [np.ones((2, 3)), 2 * np.ones((2, 3)), 2 * np.ones((2, 3))]
    np.testing.assert_allclose(scorer.relative_change(snaps, 1), [[1.0, 1.0], [0.0, 0.0]])
    Z = [np.ones((1, 4, 2)), np.zeros((1, 4, 2)) + [3.0, 1.0]]
    np.testing.assert_allclose(scorer.encoder_drift(Z, 1), [[2.0 / np.sqrt(2.0)]])
    with pytest.raises(ValueError, match="lag"):
        scorer.relative_change(snaps, 3)
