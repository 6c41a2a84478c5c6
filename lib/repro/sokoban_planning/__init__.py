"""Path channels and plan-extension kernels in a small Sokoban DRC (chapters/sokoban-planning/).

Modules, one idea each:

- :mod:`.game`      the Sokoban rules in numpy: a Boxoban-style generator, the BFS solver and its table, a vectorised
  batch step (chapters/sokoban-planning/01_theory.md);
- :mod:`.automaton` the hand-built path cellular automaton: four direction channels, shift kernels, walls at -1
  (chapters/sokoban-planning/01_theory.md);
- :mod:`.drc`       the DRC(D, N) ConvLSTM agent in torch;
- :mod:`.train`     behaviour cloning of the BFS solver with DAgger relabelling; saving and loading the agent;
- :mod:`.rollout`   batched greedy rollouts that record hidden states, pushes and ablations;
- :mod:`.analysis`  path-channel AUROC, the probe baseline, kernels against the shift template, plan growth
  (chapters/sokoban-planning/02_experiments.md).
"""
from .drc import DRC, GATES, DRCConfig
from .train import TrainConfig, expert_actions, load_agent, save_agent, solver_tables, train_bc

__all__ = ["DRC", "DRCConfig", "GATES", "TrainConfig", "expert_actions", "load_agent", "save_agent",
           "solver_tables", "train_bc"]
