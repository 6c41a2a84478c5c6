"""Monitoring memorization and generalization from a mixture-of-experts model's routing (Li, Fan & Zhou, ICLR 2026).

Explained in chapters/moe-grokking/01_theory.md; used in chapters/moe-grokking/02_experiments.md.

The paper's two metrics, as we reconstruct them (the paper's exact definitions were not available to us; every choice
marked "ours" is ours):

- **Pathway.** For a sample i and MoE layer l, aggregate the renormalised top-k gate vectors g_{tau,l} of the
  sample's prompt tokens tau into a_{i,l} = mean_tau g_{tau,l} (ours: the mean over the prompt positions
  [op, a, b], not the answer token, which the model reads only after predicting it). The layer's entry is the sorted
  top-k experts of a_{i,l}; the pathway s_i concatenates the entries of all layers, each expert written as the symbol
  (l, e), so that expert 3 of layer 1 and expert 3 of layer 2 are different symbols (ours).
- **Pathway distance** of a group: the mean over pairs of its samples of the Levenshtein distance between their
  pathways, divided by the pathway length L*k (ours), computed by `rapidfuzz`.
- **Layer consistency** of a sample: the mean over adjacent layers of cos(e_{i,l}, e_{i,l+1}), with
  e_{i,l} = sum_j a_{i,l,j} u_j^{(l)} and expert j's embedding u_j^{(l)} = its router row W_r^{(l)}[j] (ours: it lives
  in the residual stream, so rows of different layers can be compared). A group's value is the mean over samples.

Also here: routing and load entropy, the weight norm, crossing times and onsets, per-sample memorization times,
rank correlations, the numbers behind the chapter's claims (`group_times`, `claim_quantities`), and
`train_monitored`, which trains the book's MoE transformer on the `.grokking_mix` task mixture and evaluates all of
this at chosen steps.

Modules, one idea each:

- :mod:`.grokking_mix` the task mixture: groups of modular-arithmetic facts that memorize and generalize at different
  times, plus a random-label control group;
- :mod:`.metrics`   pathways, pathway distance, layer consistency, routing and load entropy, the weight norm; and the
  paper's own definitions (experts up to a cumulative routing weight of 0.7, raw Levenshtein distance, C_i),
  recomputed from a log's stored router probabilities (`paper_curves`);
- :mod:`.marks`     crossing times and onsets, memorization times, the marks (0.99, 0.9, 0.95, 0.5), `group_times`
  and `claim_quantities`; `lag_correlation` (do later-fitted groups lag longer?) and `monitor_correlations` (the
  paper's Table 1: Pearson's r of each monitor with test accuracy over checkpoints);
- :mod:`.config`    `GrokkingConfig` and the four run `VARIANTS`;
- :mod:`.training`  `train_monitored` and `run_experiments`;
- :mod:`.logs`      the shipped logs under data/moe-grokking/ (`save_log`, `load_log`; one file per run with
  `make_shipped_run`, `run_file`, `load_runs`, `shipped_seeds`; `make_pilot`; `no_shipped_seed`, the clear error for
  a seed that has none).
"""
from .config import SHIPPED_VARIANTS, VARIANTS, GrokkingConfig, variant_config
from .logs import (NoShippedRun, load_log, load_runs, make_shipped_run, no_shipped_seed, run_file, save_log,
                   shipped_seeds)
from .marks import (FITTED, GENERALIZED, LEARNS_RULE, MEMORIZED, claim_quantities, consistency_rise_interval,
                    drop_from_peak, generalization_onset, group_times, lag_correlation, memorization_times,
                    monitor_correlations, rank_correlation, sample_consistency, time_to_reach, value_at)
from .metrics import (PAPER_MASS, PROMPT_POSITIONS, add_paper_curves, aggregate_gates, cumulative_experts,
                      layer_consistency, layer_pathway_distance, levenshtein, load_entropy, pairwise_mean, paper_consistency, paper_curves,
                      paper_pathway_distance, paper_pathway_strings, pathway_distance, pathway_strings, pathways,
                      routing_entropy, weight_norm)
from .training import evaluate, log_steps, run_experiments, train_monitored

__all__ = [
    "PROMPT_POSITIONS", "levenshtein", "aggregate_gates", "pathways", "pathway_strings", "pairwise_mean",
    "pathway_distance", "layer_pathway_distance", "layer_consistency", "routing_entropy", "load_entropy", "weight_norm",
    "PAPER_MASS", "cumulative_experts", "paper_pathway_strings", "paper_pathway_distance", "paper_consistency",
    "paper_curves", "add_paper_curves",
    "MEMORIZED", "GENERALIZED", "FITTED", "LEARNS_RULE", "time_to_reach", "generalization_onset", "memorization_times",
    "drop_from_peak", "value_at", "rank_correlation", "group_times", "claim_quantities",
    "lag_correlation", "monitor_correlations", "sample_consistency", "consistency_rise_interval",
    "GrokkingConfig", "VARIANTS", "SHIPPED_VARIANTS", "variant_config",
    "log_steps", "evaluate", "train_monitored", "run_experiments",
    "save_log", "load_log", "make_shipped_run", "run_file", "load_runs", "shipped_seeds", "NoShippedRun",
    "no_shipped_seed",
]
