"""Unit tests of repro.scorer's batched DQN (chapters/scorer): episode ends, replay, batched networks and Adam,
evaluation, training."""
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode

from repro import scorer
from repro.common import thread_limit


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny batched matmuls are fastest, and reproducible, on one thread (the same rule as `repro.scorer.train`)."""
    with thread_limit(1, blas=False):
        yield


class CountdownVecEnv:
    """A hand-made vector env with NEXT_STEP autoreset. Copy i's episode lasts lengths[i] steps, obs = [t],
    reward = 1 per step; copy 0 terminates, copy 1 is truncated (time limit)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, lengths=(3, 2)):
        import gymnasium as gym

        self.lengths = np.array(lengths)
        self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, (1,), np.float32)
        self.single_action_space = gym.spaces.Discrete(2)

    def reset(self, seed=None):
        self.t = np.zeros(len(self.lengths), dtype=int)
        self.prev_done = np.zeros(len(self.lengths), dtype=bool)
        return self.t[:, None].astype(np.float32), {}

    def step(self, actions):
        self.t = np.where(self.prev_done, 0, self.t + 1)
        reward = np.where(self.prev_done, 0.0, 1.0)
        end = (self.t >= self.lengths) & ~self.prev_done
        term = end & (np.arange(len(self.lengths)) == 0)
        trunc = end & ~term
        self.prev_done = end
        return self.t[:, None].astype(np.float32), reward, term, trunc, {}

    def close(self):
        pass


def test_episode_ends_against_a_hand_made_env():
    envs = scorer.GroupedEnvs("countdown", seeds=[0], envs_per_group=2, make=lambda s: CountdownVecEnv((3, 2)))
    obs = envs.reset()
    buf = scorer.ReplayBuffer([0], capacity=100, obs_dim=1)
    rows = []
    for _ in range(7):
        st = envs.step(np.zeros((1, 2), dtype=int))
        buf.add(obs, np.zeros((1, 2), dtype=int), st.reward, st.next_obs, st.terminated, st.valid)
        rows.append((st.obs[0, :, 0].tolist(), st.valid[0].tolist(), st.terminated[0].tolist(),
                     st.truncated[0].tolist()))
        obs = st.obs
    # copy 1 (length 2, truncated): steps 1, 2 (truncated, next obs is the true last one), reset step (invalid), ...
    assert [r[1][1] for r in rows] == [True, True, False, True, True, False, True]
    assert [r[3][1] for r in rows] == [False, True, False, False, True, False, False]
    assert not any(r[2][1] for r in rows)                      # truncation is never termination
    # copy 0 (length 3, terminated at its 3rd step); the reset step after it is not stored
    assert [r[1][0] for r in rows] == [True, True, True, False, True, True, True]
    assert [r[2][0] for r in rows] == [False, False, True, False, False, False, True]
    # stored transitions: copy 0 gives 6, copy 1 gives 5; none goes from a last obs to a reset obs
    assert buf.size[0] == 11
    stored = np.c_[buf.obs[0, :11, 0], buf.next_obs[0, :11, 0]]
    assert np.all(stored[:, 1] == stored[:, 0] + 1)
    # a terminated transition has next obs = the true last observation, and its flag set
    assert set(stored[buf.terminated[0, :11] == 1, 1]) == {3.0}
    # episodes: (steps of the group so far, return, length)
    ep = envs.episode_table()[0]
    assert sorted(ep[:, 2].tolist()) == [2, 2, 3, 3]
    np.testing.assert_array_equal(ep[:, 1], ep[:, 2])


def test_cartpole_episode_return_equals_length_and_invalid_step_has_zero_reward():
    envs = scorer.GroupedEnvs("CartPole-v1", seeds=[3], envs_per_group=2)
    envs.reset()
    seen_invalid = False
    for _ in range(40):                                        # always push right: the pole falls in ~10 steps
        st = envs.step(np.ones((1, 2), dtype=int))
        if not st.valid.all():
            seen_invalid = True
            assert np.all(st.reward[~st.valid] == 0)
    ep = envs.episode_table()[0]
    assert seen_invalid and len(ep) >= 2
    np.testing.assert_array_equal(ep[:, 1], ep[:, 2])
    assert np.all(ep[:, 2] < 30)


def test_make_vector_env_falls_back_to_sync_for_acrobot():
    env = scorer.make_vector_env("Acrobot-v1", 2)
    assert env.num_envs == 2 and env.single_action_space.n == 3
    env.close()
    with pytest.raises(ValueError, match="num_envs"):
        scorer.make_vector_env("CartPole-v1", 0)


def test_replay_shapes_ring_and_validation():
    buf = scorer.ReplayBuffer([0, 1], capacity=5, obs_dim=3)
    obs = np.arange(2 * 4 * 3, dtype=np.float32).reshape(2, 4, 3)
    valid = np.array([[True, True, True, True], [True, False, False, False]])
    z = np.zeros((2, 4))
    buf.add(obs, z.astype(int), z, obs + 1, z, valid)
    buf.add(obs, z.astype(int), z, obs + 1, z, valid)
    assert buf.size.tolist() == [5, 2] and buf.ptr.tolist() == [3, 2]
    b = buf.sample(7)
    assert b.obs.shape == (2, 7, 3) and b.action.shape == (2, 7) and b.action.dtype == torch.int64
    assert torch.all(b.next_obs == b.obs + 1)
    assert set(b.obs[1, :, 0].tolist()) == {12.0}             # group 1 stored only its first copy
    with pytest.raises(ValueError, match="batch_size"):
        buf.sample(0)
    with pytest.raises(ValueError, match="obs"):
        buf.add(obs[:, :, :2], z, z, obs, z)
    with pytest.raises(ValueError, match="capacity"):
        scorer.ReplayBuffer([0], capacity=0, obs_dim=3)


def test_qnetwork_groups_are_independent_and_seeded():
    a = scorer.QNetwork([0, 1, 2], obs_dim=4, n_actions=2)
    b = scorer.QNetwork([1], obs_dim=4, n_actions=2)
    torch.testing.assert_close(a.enc[1], b.enc[0], rtol=0, atol=0)
    x = torch.randn(3, 5, 4)
    q = a.q_values(x)
    assert q.shape == (3, 5, 2)
    torch.testing.assert_close(q[1:2], b.q_values(x[1:2]), rtol=1e-5, atol=1e-6)
    z = a.encode(x)
    torch.testing.assert_close(z.abs().mean(-1), torch.ones(3, 5), rtol=1e-5, atol=1e-5)   # L1Norm
    with pytest.raises(ValueError, match="hidden"):
        scorer.QNetwork([0], obs_dim=4, n_actions=2, hidden=0)


def test_batched_adam_equals_torch_adam_and_mask_freezes_bitwise():
    torch.manual_seed(0)
    p = torch.randn(3, 6)
    ref = p.clone().requires_grad_()
    torch_opt = torch.optim.Adam([ref], lr=1e-2)
    ours = scorer.BatchedAdam(p, lr=1e-2)
    for _ in range(5):
        g = torch.randn(3, 6)
        ref.grad = g.clone()
        torch_opt.step()
        ours.step(g)
    torch.testing.assert_close(p, ref.detach(), rtol=1e-5, atol=1e-6)
    before = p.clone()
    m_before = ours.m.clone()
    ours.step(torch.randn(3, 6), mask=torch.tensor([True, False, True]))
    assert torch.equal(p[1], before[1]) and torch.equal(ours.m[1], m_before[1])
    assert not torch.equal(p[0], before[0])
    with pytest.raises(ValueError, match="lr"):
        scorer.BatchedAdam(p, lr=[1e-3, 1e-3])


def test_clipping_is_per_group():
    p = torch.zeros(2, 2)
    opt = scorer.BatchedAdam(p, lr=1.0, max_grad_norm=1.0, betas=(0.0, 0.0), eps=0.0)
    opt.step(torch.tensor([[3.0, 4.0], [0.3, 0.4]]))           # both directions normalised by Adam: sign steps
    torch.testing.assert_close(p, -torch.ones(2, 2))


def test_epsilon_schedule():
    assert scorer.epsilon_schedule(0, 1.0, 0.05, 100) == 1.0
    assert scorer.epsilon_schedule(50, 1.0, 0.05, 100) == pytest.approx(0.525)
    assert scorer.epsilon_schedule(500, 1.0, 0.05, 100) == 0.05


def test_return_curve_auc_and_last_episodes():
    ep = np.array([[10, 1.0, 10], [20, 3.0, 10], [30, 5.0, 10]])
    curve = scorer.return_curve(ep, [5, 10, 25, 30], window=2)
    np.testing.assert_allclose(curve, [np.nan, 1.0, 2.0, 4.0])
    assert scorer.last_episodes_mean(ep, 2) == 4.0
    assert scorer.auc([0.0, 2.0], [0, 10]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="window"):
        scorer.return_curve(ep, [1], window=0)


def test_a_few_dqn_training_steps_run_and_log():
    cfg = scorer.DQNConfig(total_steps=600, envs_per_group=2, buffer_size=600, learning_starts=200, target_every=100,
                       eps_decay_steps=300, log_every=50, n_probe=8)
    log = scorer.train(cfg, seeds=[0, 1])
    assert log.stats["delta_var"].shape == (200, 2)
    assert len(log.snap_enc) == 5 and log.snap_probe[0].shape == (2, 8, 64)
    assert all(len(e) > 0 for e in log.episodes)
    ev = scorer.greedy_rollouts(log.net, "CartPole-v1", [0, 1], episodes=2, max_steps=50)
    assert ev["q0"].shape == (2, 2) and np.all(ev["mc"] > 0)
    with pytest.raises(ValueError, match="learning_starts"):
        scorer.train(scorer.DQNConfig(total_steps=100, learning_starts=200), seeds=[0])
