"""DeepFaith in miniature: an amortized explainer trained on filtered prior explanations (L_PC) and on the model's
local behaviour (L_LC), evaluated by the ten faithfulness metrics of :mod:`.faithfulness`.

Explained in chapters/amortized-explainer/ (index.md, 01_theory.md, 02_experiments.md), after *Learning for Highly
Faithful Explainability* (Guo et al., ICLR 2026). Modules:

- :mod:`.faithfulness` the ten faithfulness metrics, vectorised over a batch of inputs of any shape and grouping;
- :mod:`.tasks`        bundled data sets, the target classifiers and the grouping of features into tokens;
- :mod:`.priors`       captum's explainers, the priors of the supervision signal;
- :mod:`.supervision`  dedup by cosine similarity and the per-metric quantile filter;
- :mod:`.explainer`    the transformer explainer, L_PC, L_LC (both signs), the dynamic α and training;
- :mod:`.toy`          the additive-logit model whose exact attribution is known;
- :mod:`.experiment`   one task's run: priors, pool, five learned explainers, metrics, ranks and timings.
"""
from .tasks import TASKS, Task, make_task, mlp, tiny_cnn, train_classifier
from .priors import PRIORS, explain, explain_all
from .supervision import dedup, filter_maps, pool
from .explainer import DynamicAlpha, Explainer, TrainLog, l_lc, l_pc, lc_batch, tokens, train_explainer
from .toy import ToyResult, additive_logit_model, run_toy
from .experiment import LEARNED, SETTINGS, SIZES, TaskResult, pool_fc_gain_ci, run_task, time_per_input, worst_gap_ci

__all__ = ["TASKS", "Task", "make_task", "mlp", "tiny_cnn", "train_classifier", "PRIORS", "explain", "explain_all",
           "dedup", "filter_maps", "pool", "DynamicAlpha", "Explainer", "TrainLog", "l_lc", "l_pc", "lc_batch",
           "tokens", "train_explainer", "ToyResult", "additive_logit_model", "run_toy", "LEARNED", "SETTINGS",
           "SIZES", "TaskResult", "pool_fc_gain_ci", "run_task", "time_per_input", "worst_gap_ci"]
