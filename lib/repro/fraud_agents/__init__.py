"""MultiAgentFraudBench in miniature: a social platform where scam accounts and benign users interact, its exact
metrics, three mitigations, and policies we can run here (no language model).

Explained in chapters/fraud-agents/ (index.md, 01_platform.md, 02_experiments.md), after *When AI Agents Collude
Online: Financial Fraud Risks by Collaborative LLM Agents on Social Platforms* (Ren et al., ICLR 2026). Modules:

- :mod:`.platform`   follow graph, recommender, DM channels with a cap, transfers, mitigations, the event log;
- :mod:`.metrics`    R_conv, R_pop, fraud depth and the monitor's precision/recall/F1 from a log;
- :mod:`.policies`   the calibrated stochastic policy, the replay policy, the OpenAI-compatible endpoint adapter;
- :mod:`.experiment` runs, replicates, calibration to the paper's baseline, log digests.
"""
from .experiment import (TARGETS, calibrate, log_digest, paired_difference_ci, paired_interval, rate_difference_ci,
                         replicate, simulate, summary)
from .metrics import depth_curve, monitor_scores, private_conversations, rates, successes
from .platform import ACTIONS, GRAPHS, Action, Channel, Config, Platform, follow_graph
from .policies import (CalibratedPolicy, EndpointPolicy, Hazard, Policy, ReplayPolicy, parse_action, render_prompt,
                       sigmoid)

__all__ = ["TARGETS", "calibrate", "log_digest", "paired_difference_ci", "paired_interval", "rate_difference_ci",
           "replicate", "simulate", "summary", "depth_curve", "monitor_scores", "private_conversations", "rates",
           "successes", "ACTIONS", "GRAPHS", "Action", "Channel", "Config",
           "Platform", "follow_graph", "CalibratedPolicy", "EndpointPolicy", "Hazard", "Policy", "ReplayPolicy",
           "parse_action", "render_prompt", "sigmoid"]
