"""SCORER (Martinez, Li, Lu & Chen, ICLR 2026): Stackelberg coupling of representation learning and Q-learning, and
the batched-seed DQN it is built on.

Explained in chapters/scorer/ (01_theory.md derives the losses, 02_experiments.md runs them). Modules, one idea each:

- :mod:`.envs`         gymnasium vector environments, one per independent run, with NEXT_STEP autoreset handled
  (the reset step is not a transition; ``terminated`` and ``truncated`` kept apart) and episode returns tracked;
- :mod:`.replay`       numpy ring buffers for G runs at once, shape (G, capacity, ...), each sampled by its own
  generator;
- :mod:`.dqn`          G Q-networks as batched weights with an encoder / Q-head split, Adam per group, the DQN update
  and the training loop with its diagnostics;
- :mod:`.evaluate`     return curves, AUC, greedy rollouts for value bias (intervals and smoothing: `repro.common`);
- :mod:`.stackelberg`  SCORER's leader and follower losses, its update rule, and the chapter's diagnostics.
"""
from .dqn import BatchedAdam, DQNConfig, DQNUpdate, QNetwork, TrainLog, epsilon_schedule, l1_norm, td_errors, train
from .envs import ENV_IDS, EnvStep, GroupedEnvs, make_vector_env
from .evaluate import auc, greedy_rollouts, last_episodes_mean, return_curve
from .replay import Batch, ReplayBuffer
from .stackelberg import (FOLLOWER_LOSSES, KINDS, ScorerUpdate, bellman_variance, encoder_drift, follower_loss,
                          leader_loss, msbe, msbe_decomposition, relative_change)

__all__ = [
    "ENV_IDS", "EnvStep", "GroupedEnvs", "make_vector_env",
    "Batch", "ReplayBuffer",
    "BatchedAdam", "DQNConfig", "DQNUpdate", "QNetwork", "TrainLog", "epsilon_schedule", "l1_norm", "td_errors",
    "train",
    "auc", "greedy_rollouts", "last_episodes_mean", "return_curve",
    "FOLLOWER_LOSSES", "KINDS", "ScorerUpdate", "bellman_variance", "encoder_drift", "follower_loss", "leader_loss",
    "msbe", "msbe_decomposition", "relative_change",
]
