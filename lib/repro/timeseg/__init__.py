"""TimeSeg (Kim, Kim & Lee, ICLR 2026): segment-wise explanations of a black-box time-series classifier, chosen by
a policy trained with PPO to maximise a sequential conditional mutual information with a length penalty.

Explained in chapters/timeseg/01_theory.md (the objective, reward, termination, policy and PPO) and
chapters/timeseg/02_experiments.md (generators, black box, baselines, metrics). Modules:

- :mod:`.data`      TimeX-style generators with ground-truth masks, and GunPoint from data/timeseg/;
- :mod:`.blackbox`  the TCN classifier that is explained;
- :mod:`.env`       masking, the reward, termination and the objective J;
- :mod:`.ppo`       a small PPO for discrete (factorised) actions: TD/GAE advantages, the clipped loss, the update;
- :mod:`.agent`     the factorised start/end policy, the critic, episodes, PPO training, explanation;
- :mod:`.oracle`    the greedy oracle that maximises the same objective by enumeration;
- :mod:`.baselines` thresholded IG and occlusion (captum), fixed-patch LIME, random segments;
- :mod:`.metrics`   F1, IoU, boundaries, AUROC drops;
- :mod:`.shipped`   the trained black boxes and policies shipped under data/timeseg/.
"""
