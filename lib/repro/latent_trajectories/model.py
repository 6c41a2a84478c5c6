"""The reasoning model: the book's dense transformer trained on noisy-teacher traces, batched sampling with a
key-value cache, and the hidden states of finished traces.

Explained in chapters/latent-trajectories/02_experiments.md. Sampling reuses the blocks of `repro.nn.Transformer`
step by step (a cache of keys and values per block), so that five samples of hundreds of questions take seconds on
one CPU thread; `Transformer.forward` itself recomputes every position and serves for training and for reading the
residual stream afterwards.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from ..common import check_int, check_positive, provenance_record
from ..nn import Transformer, TransformerConfig, train_lm
from .traces import EOS, NL, PAD, VOCAB_SIZE, Teacher, encode, question_words, teacher_batch

MAX_LEN = 112


def model_config(d_model: int = 64, n_layers: int = 4, n_heads: int = 4) -> TransformerConfig:
    """The chapter's dense transformer: 4 blocks, width 64, 4 heads, context 112.

    Explained in chapters/latent-trajectories/02_experiments.md.
    """
    return TransformerConfig(vocab_size=VOCAB_SIZE, max_len=MAX_LEN, d_model=d_model, n_layers=n_layers,
                             n_heads=n_heads)


def train_reasoner(steps: int, *, seed: int = 0, batch_size: int = 64, lr: float = 2e-3, warmup: int = 100,
                   teacher: Teacher = Teacher(), cfg: TransformerConfig | None = None):
    """Train a fresh model for `steps` AdamW steps on fresh noisy-teacher traces (loss on the trace tokens only).

    Returns (model in eval mode, provenance dict: steps, seconds, final loss, teacher, seed).
    Explained in chapters/latent-trajectories/02_experiments.md.
    """
    check_int("steps", steps)
    check_int("batch_size", batch_size)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = Transformer(cfg or model_config())

    def batches(step):
        tokens, mask, _ = teacher_batch(batch_size, teacher, rng, max_len=MAX_LEN)
        width = int((tokens != PAD).sum(1).max())             # drop the all-padding tail of the batch
        return torch.from_numpy(tokens[:, :width]), torch.from_numpy(mask[:, :width])

    hist = train_lm(model, batches, steps, lr=lr, warmup=min(warmup, steps), weight_decay=0.01)
    final = float(np.mean(hist["loss"][-50:]))
    return model, {"steps": int(steps), "seconds": float(hist["seconds"]), "final_loss": final, "seed": int(seed),
                   "batch_size": int(batch_size), "lr": float(lr), "teacher": vars(teacher).copy(),
                   "loss": [float(x) for x in hist["loss"]]}


def _attend(block, x, cache, n_heads):
    """One block on the new positions `x` (B, t, D), appending their keys and values to `cache` (a dict)."""
    B, t, D = x.shape
    q, k, v = block.attn.qkv(block.ln_attn(x)).view(B, t, 3, n_heads, D // n_heads).permute(2, 0, 3, 1, 4)
    if "k" in cache:
        k, v = torch.cat([cache["k"], k], dim=2), torch.cat([cache["v"], v], dim=2)
    cache["k"], cache["v"] = k, v
    y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=t > 1)
    x = x + block.attn.out(y.transpose(1, 2).reshape(B, t, D))
    return x + block.mlp(block.ln_mlp(x))


@torch.no_grad()
def sample(model: Transformer, prompts: torch.Tensor, *, temperature: float = 0.9, max_len: int = MAX_LEN,
           generator: torch.Generator | None = None) -> torch.Tensor:
    """Sample continuations of equal-length `prompts` (B, P) until EOS or `max_len`; returns (B, max_len) tokens,
    PAD after EOS. Temperature sampling from the softmax of logits / `temperature`, with a key-value cache.

    Explained in chapters/latent-trajectories/02_experiments.md.
    """
    check_positive("temperature", temperature)
    if model.cfg.n_experts:
        raise ValueError("model must be dense (n_experts=0): the cached sampler runs dense blocks")
    if prompts.dim() != 2 or prompts.shape[1] >= max_len:
        raise ValueError(f"prompts must be (batch, length < max_len={max_len}), got {tuple(prompts.shape)}")
    B, P = prompts.shape
    out = torch.full((B, max_len), PAD, dtype=torch.long)
    out[:, :P] = prompts
    caches = [dict() for _ in model.blocks]
    done = torch.zeros(B, dtype=torch.bool)
    x_in, pos = prompts, 0
    for t in range(P, max_len):
        x = model.embed(x_in) + model.pos(torch.arange(pos, pos + x_in.shape[1]))
        for block, cache in zip(model.blocks, caches):
            x = _attend(block, x, cache, model.cfg.n_heads)
        logits = model.unembed(model.ln_final(x[:, -1]))
        probs = torch.softmax(logits / temperature, dim=-1)
        nxt = torch.multinomial(probs, 1, generator=generator).squeeze(1)
        nxt = torch.where(done, torch.full_like(nxt, PAD), nxt)
        out[:, t] = nxt
        done |= nxt == EOS
        if bool(done.all()):
            break
        pos, x_in = t, nxt[:, None]
    return out


@dataclass
class Samples:
    """`k` sampled traces per question: tokens (Q*k, max_len), the question of each row, its sample index 0..k-1,
    the prompt length, and the seconds sampling took. Explained in chapters/latent-trajectories/02_experiments.md."""
    tokens: np.ndarray
    question: np.ndarray
    repeat: np.ndarray
    prompt_len: np.ndarray
    answer: np.ndarray
    seconds: float


def sample_questions(model: Transformer, questions, k: int = 5, *, temperature: float = 0.9, seed: int = 0) -> Samples:
    """Draw `k` traces for each question, batching the questions of equal length together.

    Explained in chapters/latent-trajectories/02_experiments.md.
    """
    check_int("k", k)
    if not len(questions):
        raise ValueError("questions must be a non-empty list of digit arrays")
    gen = torch.Generator().manual_seed(seed)
    start = time.perf_counter()
    by_len: dict[int, list[int]] = {}
    for i, q in enumerate(questions):
        by_len.setdefault(len(q), []).append(i)
    rows, qid, rep, plen = [], [], [], []
    for n_terms in sorted(by_len):
        ids = by_len[n_terms]
        prompts = torch.tensor([encode(question_words(questions[i])) for i in ids for _ in range(k)])
        rows.append(sample(model, prompts, temperature=temperature, generator=gen).numpy())
        qid += [i for i in ids for _ in range(k)]
        rep += [j for _ in ids for j in range(k)]
        plen += [prompts.shape[1]] * len(prompts)
    order = np.lexsort((np.array(rep), np.array(qid)))
    answers = np.array([int(np.sum(q) % 10) for q in questions])
    return Samples(tokens=np.concatenate(rows)[order], question=np.array(qid)[order], repeat=np.array(rep)[order],
                   prompt_len=np.array(plen)[order], answer=answers, seconds=time.perf_counter() - start)


@torch.no_grad()
def hidden_states(model: Transformer, tokens: np.ndarray, batch: int = 512) -> np.ndarray:
    """The residual stream after every block (the embedding layer excluded, as in the paper's code) for each trace:
    float32 (n_traces, n_layers, max_len, d_model). Explained in chapters/latent-trajectories/02_experiments.md."""
    if tokens.ndim != 2:
        raise ValueError(f"tokens must be (n_traces, length), got shape {tokens.shape}")
    out = []
    for i in range(0, len(tokens), batch):
        res = model(torch.from_numpy(tokens[i:i + batch]).long()).residuals[1:]
        out.append(torch.stack(res, dim=1).numpy())
    return np.concatenate(out)


@torch.no_grad()
def next_token_probs(model: Transformer, tokens: np.ndarray, positions: np.ndarray, batch: int = 512) -> np.ndarray:
    """The model's next-token distribution (final layer, temperature 1) at `positions[i]` of trace i: (n, vocab).

    Explained in chapters/latent-trajectories/02_experiments.md.
    """
    if len(positions) != len(tokens):
        raise ValueError("positions must give one position per trace")
    out = []
    for i in range(0, len(tokens), batch):
        logits = model(torch.from_numpy(tokens[i:i + batch]).long()).logits
        idx = torch.as_tensor(positions[i:i + batch]).long().clamp_min(0)
        out.append(torch.softmax(logits[torch.arange(len(idx)), idx], dim=-1).numpy())
    return np.concatenate(out)


def make_checkpoint(path, steps: int = 2500, seed: int = 0, **kwargs):
    """Train `train_reasoner(steps, seed=seed, **kwargs)` and save it with its provenance to `path` (the file that
    `scale="ci"` loads). Explained in chapters/latent-trajectories/02_experiments.md."""
    from ..nn import save_checkpoint

    with torch.inference_mode(False):
        model, info = train_reasoner(steps, seed=seed, **kwargs)
    info = {k: v for k, v in info.items() if k != "loss"} | {"loss_every_50": info["loss"][::50]}
    command = (f"from repro.latent_trajectories import make_checkpoint; make_checkpoint('{path}', steps={steps}, "
               f"seed={seed})")
    save_checkpoint(model, path, command=command, **info)
    return model, info
