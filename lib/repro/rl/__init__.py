"""The book's reinforcement-learning substrate: environments, replay, batched DQN, evaluation.

Used by chapters/scorer/ (SCORER, where it is explained; today its only user) and meant for later chapters that
train RL agents (PPO for TimeSeg, a Sokoban agent). Modules, one idea each:

- :mod:`.envs`     gymnasium vector environments, one per independent run, with NEXT_STEP autoreset handled
  (the reset step is not a transition; ``terminated`` and ``truncated`` kept apart) and episode returns tracked;
- :mod:`.replay`   numpy ring buffers for G runs at once, shape (G, capacity, ...), each sampled by its own generator;
- :mod:`.dqn`      G Q-networks as batched weights with an encoder / Q-head split, Adam per group, the DQN update and
  the training loop with its diagnostics;
- :mod:`.evaluate` return curves, AUC, greedy rollouts for value bias (intervals and smoothing: `repro.common`);
- :mod:`.ppo`      a small PPO for discrete (factorised) actions: TD/GAE advantages, clipped loss, update (chapters/timeseg/);
- :mod:`.sokoban`  numpy Sokoban: Boxoban-style generator, BFS solver and table, batch step (chapters/sokoban-planning/).
"""
from .dqn import BatchedAdam, DQNConfig, DQNUpdate, QNetwork, TrainLog, epsilon_schedule, l1_norm, td_errors, train
from .envs import ENV_IDS, EnvStep, GroupedEnvs, make_vector_env
from .evaluate import auc, greedy_rollouts, last_episodes_mean, return_curve
from .replay import Batch, ReplayBuffer
from .ppo import PPOConfig, masked_categorical, ppo_losses, ppo_update, td_advantages

__all__ = [
    "ENV_IDS", "EnvStep", "GroupedEnvs", "make_vector_env",
    "Batch", "ReplayBuffer",
    "BatchedAdam", "DQNConfig", "DQNUpdate", "QNetwork", "TrainLog", "epsilon_schedule", "l1_norm", "td_errors",
    "train",
    "auc", "greedy_rollouts", "last_episodes_mean", "return_curve",
    "PPOConfig", "masked_categorical", "ppo_losses", "ppo_update", "td_advantages",
]
