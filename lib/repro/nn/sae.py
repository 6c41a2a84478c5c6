"""The book's sparse-autoencoder family: TopK, BatchTopK, Matryoshka, AuxK, metrics and a trainer.

Explained in chapters/temporal-sae/01_theory (and used by later chapters on multimodal SAEs).

An SAE encodes an activation x (d_in numbers) into m sparse latents and decodes it back:

    f(x) = sigma(W_enc (x - b_dec) + b_enc),        x_hat = W_dec f(x) + b_dec,

where sigma keeps the k largest positive pre-activations of each token (TopK, Gao et al. 2024) or the k*B largest
over a batch of B tokens (BatchTopK, Bussmann et al. 2024). A BatchTopK SAE learns a threshold theta during training
(a running average of the smallest activation it kept) and encodes with f(x) = pre * [pre > theta] at inference, so
that one token's code does not depend on the rest of its batch. The decoder's columns are kept at unit norm.

Matryoshka (Bussmann et al. 2025; Nabeshima 2024): with nested prefixes m_1 < ... < m_G = m, the reconstruction loss
is summed over the reconstructions made from the first m_g latents only, so that the first latents must explain as
much as they can on their own. One prefix (m,) is a plain SAE. AuxK (Gao et al. 2024) asks the k_aux most active
*dead* latents to reconstruct the remaining error, which revives them.

    sae = SAE(d_in=64, n_latents=512, k=8, prefixes=(102, 512))
    history = train_sae(sae, acts, steps=1000)
    stats = evaluate_sae(sae, acts)      # fvu, cosine, l0, dead
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ..common import check_between, check_choice, check_int, check_non_negative, check_positive, stopwatch

ACTIVATIONS = ("topk", "batchtopk")


@dataclass
class SAEOutput:
    """What one forward pass returns: pre-activations, sparse codes and the full reconstruction (all (B, .)).

    Explained in chapters/temporal-sae/01_theory.md.
    """

    pre: torch.Tensor
    codes: torch.Tensor
    recon: torch.Tensor


def topk_activation(pre: torch.Tensor, k: int) -> torch.Tensor:
    """ReLU, then keep the k largest entries of each row (ties broken by torch.topk); the rest become 0.

    Explained in chapters/temporal-sae/01_theory.md.
    """
    act = torch.relu(pre)
    vals, idx = act.topk(k, dim=-1)
    return torch.zeros_like(act).scatter(-1, idx, vals)


def batch_topk_activation(pre: torch.Tensor, k: int):
    """ReLU, then keep the k*B largest entries of the whole (B, m) batch. Returns (codes, smallest kept > 0).

    Explained in chapters/temporal-sae/01_theory.md.
    """
    act = torch.relu(pre)
    flat = act.flatten()
    n_keep = min(k * pre.shape[0], flat.numel())
    vals, idx = flat.topk(n_keep)
    codes = torch.zeros_like(flat).scatter(0, idx, vals).view_as(act)
    positive = vals[vals > 0]
    smallest = positive.min() if positive.numel() else None
    return codes, smallest


class SAE(nn.Module):
    """A (Matryoshka) TopK / BatchTopK sparse autoencoder; see the module docstring.

    `prefixes`: increasing latent counts ending with `n_latents`; the loss sums the reconstruction error of every
    prefix. `(n_latents,)` (the default) is a plain SAE; `(h, n_latents)` is the two-group Matryoshka SAE of the
    temporal-SAE chapter, whose first h latents are its "high-level" ones.
    Explained in chapters/temporal-sae/01_theory.md.
    """

    def __init__(self, d_in: int, n_latents: int, k: int, activation: str = "batchtopk", prefixes=None,
                 threshold_momentum: float = 0.99, seed: int | None = None):
        super().__init__()
        check_int("d_in", d_in)
        check_int("n_latents", n_latents)
        check_int("k", k)
        if k > n_latents:
            raise ValueError(f"k must be at most n_latents={n_latents}, got {k}")
        check_choice("activation", activation, ACTIVATIONS)
        prefixes = (n_latents,) if prefixes is None else tuple(int(p) for p in prefixes)
        if (not prefixes or prefixes[-1] != n_latents or prefixes[0] < 1
                or any(b <= a for a, b in zip(prefixes, prefixes[1:]))):
            raise ValueError(f"prefixes must increase strictly and end with n_latents={n_latents}, got {prefixes!r}")
        check_between("threshold_momentum", threshold_momentum, 0, 1, closed="left")
        self.d_in, self.n_latents, self.k = d_in, n_latents, k
        self.activation, self.prefixes, self.threshold_momentum = activation, prefixes, threshold_momentum
        gen = torch.Generator().manual_seed(0 if seed is None else int(seed))
        W = torch.randn(d_in, n_latents, generator=gen)
        W = W / W.norm(dim=0, keepdim=True)
        self.W_dec = nn.Parameter(W)                       # (d_in, m), unit columns
        self.W_enc = nn.Parameter(W.t().clone())           # tied initialisation (Gao et al. 2024)
        self.b_enc = nn.Parameter(torch.zeros(n_latents))
        self.b_dec = nn.Parameter(torch.zeros(d_in))
        self.register_buffer("threshold", torch.tensor(float("nan")))   # BatchTopK's inference threshold
        self.register_buffer("tokens_since_fired", torch.zeros(n_latents))

    # ------------------------------------------------------------------ forward
    def pre_activation(self, x: torch.Tensor) -> torch.Tensor:
        """W_enc (x - b_dec) + b_enc, shape (B, m)."""
        return (x - self.b_dec) @ self.W_enc.t() + self.b_enc

    def activate(self, pre: torch.Tensor) -> torch.Tensor:
        """The sparse code from pre-activations. BatchTopK uses the batch in training and theta in eval mode."""
        if self.activation == "topk":
            return topk_activation(pre, self.k)
        if self.training or torch.isnan(self.threshold):
            codes, smallest = batch_topk_activation(pre, self.k)
            if self.training and smallest is not None:
                with torch.no_grad():
                    s = smallest.detach()
                    m = self.threshold_momentum
                    self.threshold.copy_(s if torch.isnan(self.threshold) else m * self.threshold + (1 - m) * s)
            return codes
        return pre * (pre > self.threshold)

    def decode(self, codes: torch.Tensor, upto: int | None = None) -> torch.Tensor:
        """W_dec f + b_dec, using only the first `upto` latents if given (a Matryoshka prefix)."""
        if upto is None:
            return codes @ self.W_dec.t() + self.b_dec
        return codes[:, :upto] @ self.W_dec[:, :upto].t() + self.b_dec

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """The sparse code of x (B, d_in) -> (B, m)."""
        return self.activate(self.pre_activation(x))

    def forward(self, x: torch.Tensor) -> SAEOutput:
        if x.ndim != 2 or x.shape[1] != self.d_in:
            raise ValueError(f"x must have shape (batch, {self.d_in}), got {tuple(x.shape)}")
        pre = self.pre_activation(x)
        codes = self.activate(pre)
        return SAEOutput(pre=pre, codes=codes, recon=self.decode(codes))

    # ------------------------------------------------------------------ losses
    def reconstruction_loss(self, x: torch.Tensor, out: SAEOutput) -> torch.Tensor:
        """Sum over the prefixes of the batch's normalised squared error sum|x - x_hat_g|^2 / sum|x - mean(x)|^2."""
        denom = (x - x.mean(0)).pow(2).sum().clamp_min(1e-12)
        loss = x.new_zeros(())
        for p in self.prefixes:
            recon = out.recon if p == self.n_latents else self.decode(out.codes, upto=p)
            loss = loss + (x - recon).pow(2).sum() / denom
        return loss

    def dead_mask(self, dead_after_tokens: float) -> torch.Tensor:
        """Latents that have not fired in the last `dead_after_tokens` training tokens."""
        return self.tokens_since_fired >= dead_after_tokens

    def aux_loss(self, x: torch.Tensor, out: SAEOutput, dead: torch.Tensor, k_aux: int) -> torch.Tensor:
        """AuxK (Gao et al. 2024): the top-k_aux dead latents reconstruct the error x - x_hat, normalised."""
        n_dead = int(dead.sum())
        if n_dead == 0:
            return x.new_zeros(())
        err = (x - out.recon).detach()
        pre_dead = torch.relu(out.pre[:, dead])
        codes = topk_activation(pre_dead, min(k_aux, n_dead))
        err_hat = codes @ self.W_dec[:, dead].t()
        return (err - err_hat).pow(2).sum() / (err - err.mean(0)).pow(2).sum().clamp_min(1e-12)

    @torch.no_grad()
    def normalize_decoder(self):
        """Rescale the decoder's columns to unit norm."""
        normalize_columns_(self.W_dec, dim=0)

    @torch.no_grad()
    def remove_parallel_gradient(self):
        """Drop the part of W_dec's gradient that would change its columns' norms."""
        remove_parallel_gradient_(self.W_dec, dim=0)


@torch.no_grad()
def normalize_columns_(W: torch.Tensor, dim: int) -> None:
    """In place, rescale W to unit norm along `dim` (the axis that indexes a decoder column's coordinates).

    Shared by the book's SAEs (`SAE` here, dim=0; `repro.multimodal_sae.PairedSAE`, dim=1); explained in
    chapters/temporal-sae/01_theory.md.
    """
    W.div_(W.norm(dim=dim, keepdim=True).clamp_min(1e-8))


@torch.no_grad()
def remove_parallel_gradient_(W: torch.Tensor, dim: int) -> None:
    """In place, drop the part of W's gradient that would change its norms along `dim` (for unit-norm columns, the
    component parallel to each column). Does nothing before the first backward pass.
    Explained in chapters/temporal-sae/01_theory.md.
    """
    if W.grad is not None:
        W.grad.sub_(W * (W.grad * W).sum(dim, keepdim=True))


# ---------------------------------------------------------------------- metrics
def fvu(x: torch.Tensor, x_hat: torch.Tensor) -> float:
    """Fraction of variance unexplained: sum|x - x_hat|^2 / sum|x - mean(x)|^2.

    Explained in chapters/temporal-sae/01_theory.md.
    """
    return float((x - x_hat).pow(2).sum() / (x - x.mean(0)).pow(2).sum().clamp_min(1e-12))


def reconstruction_cosine(x: torch.Tensor, x_hat: torch.Tensor) -> float:
    """Mean cosine similarity between each x and its reconstruction. Explained in chapters/temporal-sae/01_theory.md."""
    return float(torch.nn.functional.cosine_similarity(x, x_hat, dim=-1, eps=1e-8).mean())


def l0(codes: torch.Tensor) -> float:
    """Mean number of non-zero latents per token. Explained in chapters/temporal-sae/01_theory.md."""
    return float((codes != 0).float().sum(-1).mean())


def dead_fraction(codes: torch.Tensor) -> float:
    """Fraction of latents that are zero on every token of `codes` (B, m).

    Explained in chapters/temporal-sae/01_theory.md.
    """
    return float(((codes != 0).sum(0) == 0).float().mean())


@torch.no_grad()
def encode_all(sae: SAE, acts: torch.Tensor, chunk: int = 8192):
    """Codes and reconstructions of every row of `acts` in eval mode (BatchTopK uses its threshold).

    Explained in chapters/temporal-sae/01_theory.md.
    """
    was = sae.training
    sae.eval()
    codes, recon = [], []
    for i in range(0, acts.shape[0], chunk):
        out = sae(acts[i:i + chunk])
        codes.append(out.codes)
        recon.append(out.recon)
    sae.train(was)
    return torch.cat(codes), torch.cat(recon)


def evaluate_sae(sae: SAE, acts: torch.Tensor) -> dict:
    """FVU, reconstruction cosine, L0 and dead fraction of `sae` on `acts` (eval mode).

    Explained in chapters/temporal-sae/01_theory.md.
    """
    codes, recon = encode_all(sae, acts)
    return {"fvu": fvu(acts, recon), "cosine": reconstruction_cosine(acts, recon), "l0": l0(codes),
            "dead": dead_fraction(codes)}


# ---------------------------------------------------------------------- training
def train_sae(sae: SAE, acts: torch.Tensor, steps: int, batch_size: int = 1024, lr: float = 1e-3,
              aux_coef: float = 1 / 32, k_aux: int | None = None, dead_after_tokens: float = 50_000,
              batches=None, extra_loss=None, seed: int = 0, init_bias: bool = True, callback=None) -> dict:
    """Train `sae` with Adam on rows of `acts` (N, d_in). Returns dict(loss, recon, aux, extra lists; seconds).

    - `batches(step, generator)` -> LongTensor of row indices; default: `batch_size` rows uniformly at random.
    - `extra_loss(sae, x, out)` -> scalar added to the loss (the temporal-SAE chapter's contrastive term).
    - AuxK with weight `aux_coef` on latents dead for `dead_after_tokens` tokens (k_aux defaults to d_in // 2).
    - `init_bias`: start b_dec at the mean activation.
    After every step the decoder's columns are renormalised. Explained in chapters/temporal-sae/01_theory.
    """
    if not isinstance(acts, torch.Tensor) or acts.ndim != 2 or acts.shape[1] != sae.d_in:
        raise ValueError(f"acts must be a tensor of shape (N, {sae.d_in}), got "
                         f"{tuple(acts.shape) if isinstance(acts, torch.Tensor) else type(acts).__name__}")
    check_int("steps", steps, 0)
    check_int("batch_size", batch_size)
    check_positive("lr", lr)
    check_non_negative("aux_coef", aux_coef)
    k_aux = max(1, sae.d_in // 2) if k_aux is None else k_aux
    gen = torch.Generator().manual_seed(int(seed))
    if batches is None:
        n = acts.shape[0]

        def batches(step, g):
            return torch.randint(n, (batch_size,), generator=g)
    if init_bias:
        with torch.no_grad():
            sae.b_dec.copy_(acts.mean(0))
    opt = torch.optim.Adam(sae.parameters(), lr=lr)
    sae.train()
    hist = {"loss": [], "recon": [], "aux": [], "extra": []}
    with stopwatch() as watch:
        for step in range(steps):
            x = acts[batches(step, gen)]
            out = sae(x)
            recon = sae.reconstruction_loss(x, out)
            with torch.no_grad():
                fired = (out.codes != 0).any(0)
                sae.tokens_since_fired.add_(x.shape[0]).masked_fill_(fired, 0.0)
            aux = sae.aux_loss(x, out, sae.dead_mask(dead_after_tokens), k_aux) if aux_coef > 0 else x.new_zeros(())
            extra = extra_loss(sae, x, out) if extra_loss is not None else x.new_zeros(())
            loss = recon + aux_coef * aux + extra
            opt.zero_grad(set_to_none=True)
            loss.backward()
            sae.remove_parallel_gradient()
            opt.step()
            sae.normalize_decoder()
            for key, v in (("loss", loss), ("recon", recon), ("aux", aux), ("extra", extra)):
                hist[key].append(float(v.detach()))
            if callback is not None:
                callback(step, sae, float(loss))
    hist["seconds"] = watch.seconds
    sae.eval()
    return hist
