"""The amortized explainer φ: a small transformer encoder, one token per group, one score per token; its two losses
and the dynamic weight α of Algorithm 1.

Explained in chapters/amortized-explainer/01_theory.md (the losses, Eq. ae-lpc and ae-llc, and the sign check) and
chapters/amortized-explainer/02_experiments.md (training). L_PC pulls φ(x) towards the filtered prior explanations
of x; L_LC asks the sum of φ over a random removed set I to correlate with the drop Δ(I) = f(x) − f(x \\ I) it
causes. ``sign="code"`` correlates the sum over the *kept* set instead, as the authors' repository does.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import nn

from .faithfulness.metrics import pearson
from ..common.checks import check_choice, check_int, check_positive

__all__ = ["Explainer", "tokens", "l_pc", "l_lc", "DynamicAlpha", "lc_batch", "TrainLog", "train_explainer"]


def tokens(x: torch.Tensor, groups: torch.Tensor, n_groups: int) -> torch.Tensor:
    """``(n, G, p)``: the features of each group side by side (every group must hold ``p`` features).

    Explained in chapters/amortized-explainer/02_experiments.md (one token per tabular feature or image patch).
    """
    flat_groups = groups.flatten()
    counts = torch.bincount(flat_groups, minlength=n_groups)
    if int(counts.min()) != int(counts.max()):
        raise ValueError("groups must all have the same number of features to become tokens")
    idx = torch.sort(flat_groups, stable=True).indices.reshape(n_groups, -1)
    return x.reshape(x.shape[0], -1)[:, idx]


class Explainer(nn.Module):
    """φ: value embedding of each token + position embedding → transformer encoder → one saliency per token.

    Explained in chapters/amortized-explainer/02_experiments.md. The paper's is 6 layers of width 768 over image
    patches; ours defaults to 2 layers of width 32.
    """

    def __init__(self, n_tokens: int, token_dim: int = 1, width: int = 32, layers: int = 2, heads: int = 4,
                 dropout: float = 0.0):
        super().__init__()
        n_tokens, token_dim = check_int("n_tokens", n_tokens), check_int("token_dim", token_dim)
        width, layers, heads = check_int("width", width), check_int("layers", layers), check_int("heads", heads)
        if width % heads:
            raise ValueError(f"width must be a multiple of heads; got {width} and {heads}")
        self.embed = nn.Linear(token_dim, width)
        self.position = nn.Parameter(0.1 * torch.randn(n_tokens, width))
        block = nn.TransformerEncoderLayer(width, heads, 2 * width, dropout, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(block, layers, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.LayerNorm(width), nn.Linear(width, 1))

    def forward(self, tok: torch.Tensor) -> torch.Tensor:
        """Saliency ``(n, G)`` of tokens ``(n, G, p)``."""
        return self.head(self.encoder(self.embed(tok) + self.position))[..., 0]


def l_pc(phi: torch.Tensor, s: torch.Tensor, weight=None) -> torch.Tensor:
    """L_PC as the repository computes it: mean of (1 − Pearson(φ(x), s)) / 2 over pairs, ``s`` min-max scaled
    per sample (Pearson does not see the scaling). ``weight`` (0/1 per row) drops rows without a target.

    Explained in chapters/amortized-explainer/01_theory.md.
    """
    lo, hi = s.min(-1, keepdim=True).values, s.max(-1, keepdim=True).values
    r = pearson(phi, (s - lo) / (hi - lo).clamp_min(1e-12))
    loss = (1 - r) / 2
    if weight is None:
        return loss.mean()
    return (loss * weight).sum() / weight.sum().clamp_min(1.0)


def l_lc(phi: torch.Tensor, mask: torch.Tensor, delta: torch.Tensor, sign: str = "paper") -> torch.Tensor:
    """L_LC = ½ − ½ · mean over x of Pearson over subsets j of (Σ_{i∈I_j} φ(x)_i, Δ_j).

    Explained in chapters/amortized-explainer/01_theory.md. ``mask`` ``(n, k, G)`` is True on the removed set I_j,
    ``delta`` ``(n, k)`` the drops. ``sign="paper"`` sums φ over the removed set (the paper's equation);
    ``sign="code"`` over the kept set (the repository), which flips the correlation's sign.
    """
    check_choice("sign", sign, ("paper", "code"))
    m = (mask if sign == "paper" else ~mask).to(phi.dtype)
    sums = (m * phi[:, None, :]).sum(-1)
    return 0.5 - 0.5 * pearson(sums, delta).mean()


@torch.no_grad()
def lc_batch(model, x: torch.Tensor, groups: torch.Tensor, n_groups: int, k: int, baseline=0.0, target=None,
             generator=None) -> tuple[torch.Tensor, torch.Tensor]:
    """``(mask, Δ)`` for L_LC: ``k`` Bernoulli(½) removed sets per input and the drops of the explained score.

    Explained in chapters/amortized-explainer/01_theory.md. ``model`` maps inputs ``(N, *feature_shape)`` to scores
    ``(N, classes)``; the explained class is its argmax on the clean input unless ``target`` is given.
    """
    from .faithfulness.perturb import perturb, reference, scores_on

    y0, t = reference(model, x, target)
    mask = torch.rand(x.shape[0], k, n_groups, generator=generator) < 0.5
    return mask, y0[:, None] - scores_on(model, perturb(x, mask, baseline, groups), t)


class DynamicAlpha:
    """Algorithm 1's weight α of L_PC in α·L_PC + (1 − α)·L_LC.

    Explained in chapters/amortized-explainer/01_theory.md. α = 1 until the variance of L_PC over the last
    ``window`` epochs falls to ``eps``; from that epoch t₀ on, α_t = 1 − σ((t − t₀)/C), which starts at ½ and decays;
    a variance above C·eps later resets α to 1.
    """

    def __init__(self, eps: float = 1e-5, window: int = 5, c: float = 10.0):
        self.eps, self.window, self.c = check_positive("eps", eps), check_int("window", window, 2), check_positive("c", c)
        self.history: list[float] = []
        self.t0: int | None = None
        self.alpha = 1.0

    def update(self, epoch: int, pc_loss: float) -> float:
        """Record the epoch's mean L_PC and return α for the next epoch."""
        self.history.append(float(pc_loss))
        if len(self.history) >= self.window:
            recent = torch.tensor(self.history[-self.window:], dtype=torch.float64)
            var = float(recent.var(unbiased=False))
            if self.t0 is None and var <= self.eps:
                self.t0 = epoch
            elif self.t0 is not None and var > self.c * self.eps:
                self.t0 = None
        self.alpha = 1.0 if self.t0 is None else 1.0 - 1.0 / (1.0 + math.exp(-(epoch - self.t0) / self.c))
        return self.alpha


@dataclass
class TrainLog:
    """Per-epoch means of L_PC and L_LC and the α used in that epoch (chapters/amortized-explainer/02_experiments.md)."""

    pc: list = field(default_factory=list)
    lc: list = field(default_factory=list)
    alpha: list = field(default_factory=list)


def train_explainer(explainer: Explainer, x: torch.Tensor, groups: torch.Tensor, n_groups: int, *, model=None,
                    targets=None, mode: str = "obj", epochs: int = 60, batch: int = 32, k: int = 32,
                    lr: float = 1e-3, sign: str = "paper", baseline=0.0, target=None, alpha: DynamicAlpha | None = None,
                    seed: int = 0) -> TrainLog:
    """Train φ on inputs ``x`` with ``mode`` "pc" (L_PC only), "lc" (L_LC only) or "obj" (α·L_PC + (1−α)·L_LC).

    Explained in chapters/amortized-explainer/02_experiments.md. ``targets`` is a list, one per input, of tensors
    ``(r, G)`` of kept prior explanations (``r`` may be 0); each step draws one of them per input. ``model`` and
    ``target`` are what ``lc_batch`` takes. Adam, full passes over ``x`` in shuffled batches; L_PC is logged in every mode.
    """
    check_choice("mode", mode, ("pc", "lc", "obj"))
    epochs, batch, k = check_int("epochs", epochs), check_int("batch", batch), check_int("k", k, 2)
    if mode in ("pc", "obj") and (targets is None or len(targets) != len(x)):
        raise ValueError("targets must give one (r, G) tensor of prior explanations per input for modes pc and obj")
    if mode in ("lc", "obj") and model is None:
        raise ValueError("model (the explained classifier) is needed for modes lc and obj")
    gen = torch.Generator().manual_seed(check_int("seed", seed, 0))
    opt = torch.optim.Adam(explainer.parameters(), lr=check_positive("lr", lr))
    tok = tokens(x, groups, n_groups)
    alpha = alpha or DynamicAlpha()
    log, a = TrainLog(), {"pc": 1.0, "lc": 0.0, "obj": 1.0}[mode]
    for epoch in range(epochs):
        order = torch.randperm(len(x), generator=gen)
        pcs, lcs = [], []
        for s in range(0, len(x), batch):
            idx = order[s:s + batch]
            phi = explainer(tok[idx])
            loss_pc = loss_lc = torch.zeros(())
            if targets is not None:
                tgt, w = _draw_targets(targets, idx, n_groups, gen)
                loss_pc = l_pc(phi, tgt, w)
            if mode != "pc":
                mask, delta = lc_batch(model, x[idx], groups, n_groups, k, baseline,
                                       None if target is None else target[idx], gen)
                loss_lc = l_lc(phi, mask, delta, sign)
            loss = a * loss_pc + (1 - a) * loss_lc if mode == "obj" else (loss_pc if mode == "pc" else loss_lc)
            opt.zero_grad()
            loss.backward()
            opt.step()
            pcs.append(float(loss_pc.detach()))
            lcs.append(float(loss_lc.detach()))
        log.pc.append(sum(pcs) / len(pcs))
        log.lc.append(sum(lcs) / len(lcs))
        log.alpha.append(a)
        if mode == "obj":
            a = alpha.update(epoch, log.pc[-1])
    return log


def _draw_targets(targets, idx, n_groups, gen):
    rows, weight = [], []
    for i in idx.tolist():
        t = targets[i]
        if len(t):
            rows.append(t[int(torch.randint(len(t), (1,), generator=gen))])
            weight.append(1.0)
        else:
            rows.append(torch.zeros(n_groups))
            weight.append(0.0)
    return torch.stack(rows), torch.tensor(weight)
