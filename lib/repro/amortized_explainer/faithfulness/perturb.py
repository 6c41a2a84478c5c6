"""Groups, masks, baselines and batched model evaluation: the machinery every faithfulness metric shares.

Explained in chapters/amortized-explainer/01_theory.md. A *group* is the unit an attribution is judged on: one
tabular feature, one image patch, one time segment. ``groups`` is an integer tensor of the feature shape holding each
feature's group id ``0..G-1``; removing a group replaces all its features by the baseline ``b``, the ``x \\ I`` of the
chapter's equations.
"""
from __future__ import annotations

import torch

__all__ = ["as_groups", "group_attributions", "perturb", "scores_on", "reference"]


def as_groups(feature_shape, groups=None) -> tuple[torch.Tensor, int]:
    """``(groups, G)``: the grouping as a long tensor of ``feature_shape`` and the number of groups.

    Explained in chapters/amortized-explainer/01_theory.md. ``groups=None`` makes every feature its own group.
    Group ids must be ``0..G-1`` with every id used.
    """
    feature_shape = tuple(feature_shape)
    if groups is None:
        n = 1
        for s in feature_shape:
            n *= s
        return torch.arange(n).reshape(feature_shape), n
    groups = torch.as_tensor(groups)
    if tuple(groups.shape) != feature_shape:
        raise ValueError(f"groups must have the feature shape {feature_shape}; got {tuple(groups.shape)}")
    if groups.dtype.is_floating_point or groups.dtype == torch.bool:
        raise ValueError("groups must hold integer group ids")
    groups = groups.long()
    g = int(groups.max()) + 1
    if int(groups.min()) != 0 or torch.unique(groups).numel() != g:
        raise ValueError(f"groups must use every id 0..G-1 exactly; got ids {torch.unique(groups).tolist()}")
    return groups, g


def group_attributions(a, x_shape, groups: torch.Tensor, n_groups: int) -> torch.Tensor:
    """An attribution as one value per group, ``(n, G)``.

    Explained in chapters/amortized-explainer/01_theory.md. ``a`` is either of the inputs' shape (feature values,
    summed over each group) or already ``(n, G)``.
    """
    a = torch.as_tensor(a, dtype=torch.float32)
    n = x_shape[0]
    if tuple(a.shape) == tuple(x_shape):
        flat = a.reshape(n, -1)
        out = torch.zeros(n, n_groups, dtype=flat.dtype)
        return out.index_add_(1, groups.flatten(), flat)
    if tuple(a.shape) == (n, n_groups):
        return a
    raise ValueError(f"a must have the inputs' shape {tuple(x_shape)} or one value per group ({n}, {n_groups}); "
                     f"got {tuple(a.shape)}")


def _baseline(baseline, x: torch.Tensor) -> torch.Tensor:
    b = torch.as_tensor(baseline, dtype=x.dtype)
    try:
        return torch.broadcast_to(b, x.shape)
    except RuntimeError:
        raise ValueError(f"baseline must be a number or broadcast to the inputs' shape {tuple(x.shape)}; got "
                         f"shape {tuple(b.shape)}") from None


def perturb(x: torch.Tensor, mask: torch.Tensor, baseline, groups: torch.Tensor) -> torch.Tensor:
    """Copies ``(n, m, *feature_shape)`` of ``x`` with the groups where ``mask`` (``(n, m, G)``, True = removed)
    replaced by the baseline.

    Explained in chapters/amortized-explainer/01_theory.md (``x \\ I``).
    """
    n, m = mask.shape[:2]
    removed = mask[:, :, groups.flatten()].reshape(n, m, *x.shape[1:])
    b = _baseline(baseline, x)
    return torch.where(removed, b[:, None], x[:, None])


@torch.no_grad()
def scores_on(model, xs: torch.Tensor, target: torch.Tensor, batch_size: int = 65536) -> torch.Tensor:
    """The model's score of class ``target[i]`` on every copy ``xs[i, j]``: ``(n, m)``.

    Explained in chapters/amortized-explainer/01_theory.md. Copies are evaluated in batches of ``batch_size`` rows.
    """
    n, m = xs.shape[:2]
    flat = xs.reshape(n * m, *xs.shape[2:])
    cls = target.repeat_interleave(m)
    out = []
    for s in range(0, n * m, batch_size):
        y = model(flat[s:s + batch_size])
        out.append(y.gather(1, cls[s:s + batch_size, None])[:, 0])
    return torch.cat(out).reshape(n, m)


@torch.no_grad()
def reference(model, x: torch.Tensor, target=None) -> tuple[torch.Tensor, torch.Tensor]:
    """``(f_ŷ(x), ŷ)``: the explained class (the model's argmax unless ``target`` is given) and its score.

    Explained in chapters/amortized-explainer/01_theory.md.
    """
    y = model(x)
    if y.ndim != 2 or y.shape[0] != x.shape[0]:
        raise ValueError(f"model must map (n, *feature_shape) to scores (n, classes); got output {tuple(y.shape)}")
    t = y.argmax(1) if target is None else torch.as_tensor(target).long().reshape(-1)
    if t.shape[0] != x.shape[0]:
        raise ValueError(f"target must have one class per input ({x.shape[0]}); got {t.shape[0]}")
    return y.gather(1, t[:, None])[:, 0], t
