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


def train_reasoner(steps: int, *, seed: int = 0, batch_size: int = 32, lr: float = 2e-3, warmup: int = 100,
                   teacher: Teacher = Teacher(), cfg: TransformerConfig | None = None, callback=None):
    """Train a fresh model for `steps` AdamW steps on fresh noisy-teacher traces (loss on the trace tokens only).

    `callback(step, model, loss)` runs after every step. Returns (model in eval mode, a dict: steps, seconds, final
    loss, teacher, seed, the loss of every step).
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

    hist = train_lm(model, batches, steps, lr=lr, warmup=min(warmup, steps), weight_decay=0.01, callback=callback)
    final = float(np.mean(hist["loss"][-50:]))
    return model, {"steps": int(steps), "seconds": float(hist["seconds"]), "final_loss": final, "seed": int(seed),
                   "batch_size": int(batch_size), "lr": float(lr), "teacher": vars(teacher).copy(),
                   "loss": [float(x) for x in hist["loss"]]}


def _attend(block, x, cache, t, n_heads):
    """One block on the new position `t` (x: (B, 1, D)), writing its key and value into the preallocated `cache`."""
    B, _, D = x.shape
    q, k, v = block.attn.qkv(block.ln_attn(x)).view(B, 1, 3, n_heads, D // n_heads).permute(2, 0, 3, 1, 4)
    cache["k"][:, :, t], cache["v"][:, :, t] = k[:, :, 0], v[:, :, 0]
    scores = (q @ cache["k"][:, :, :t + 1].transpose(-1, -2)) * (D // n_heads) ** -0.5     # (B, H, 1, t+1)
    y = torch.softmax(scores, dim=-1) @ cache["v"][:, :, :t + 1]
    x = x + block.attn.out(y.transpose(1, 2).reshape(B, 1, D))
    return x + block.mlp(block.ln_mlp(x))


@torch.no_grad()
def sample(model: Transformer, prompts: torch.Tensor, lengths, *, temperature: float = 0.9, max_len: int = MAX_LEN,
           generator: torch.Generator | None = None) -> torch.Tensor:
    """Sample continuations of `prompts` (B, P), right-padded, row i of length `lengths[i]`, until EOS or `max_len`;
    returns (B, max_len) tokens, PAD after EOS. One position at a time for the whole batch, with a key-value cache:
    a row still inside its prompt is fed its prompt's next token, the others a token drawn from the softmax of
    logits / `temperature`. Explained in chapters/latent-trajectories/02_experiments.md.
    """
    check_positive("temperature", temperature)
    if model.cfg.n_experts:
        raise ValueError("model must be dense (n_experts=0): the cached sampler runs dense blocks")
    lengths = torch.as_tensor(lengths, dtype=torch.long)
    if prompts.dim() != 2 or prompts.shape[1] >= max_len or lengths.shape != (prompts.shape[0],):
        raise ValueError(f"prompts must be (batch, length < max_len={max_len}) with one length per row, got "
                         f"{tuple(prompts.shape)} and lengths of shape {tuple(lengths.shape)}")
    if max_len > model.cfg.max_len:
        raise ValueError(f"max_len={max_len} exceeds the model's context {model.cfg.max_len}")
    B, P = prompts.shape
    out = torch.full((B, max_len), PAD, dtype=torch.long)
    out[:, :P] = prompts
    H, dh = model.cfg.n_heads, model.cfg.d_model // model.cfg.n_heads
    caches = [{"k": torch.zeros(B, H, max_len, dh), "v": torch.zeros(B, H, max_len, dh)} for _ in model.blocks]
    done = torch.zeros(B, dtype=torch.bool)
    for t in range(max_len - 1):
        x = model.embed(out[:, t:t + 1]) + model.pos.weight[t]
        for block, cache in zip(model.blocks, caches):
            x = _attend(block, x, cache, t, H)
        probs = torch.softmax(model.unembed(model.ln_final(x[:, -1])) / temperature, dim=-1)
        drawn = torch.multinomial(probs, 1, generator=generator).squeeze(1)
        in_prompt = t + 1 < lengths
        nxt = torch.where(in_prompt, out[:, t + 1], torch.where(done, torch.full_like(drawn, PAD), drawn))
        out[:, t + 1] = nxt
        done |= (nxt == EOS) & ~in_prompt
        if bool(done.all()):
            break
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


def sample_questions(model: Transformer, questions, k: int = 5, *, temperature: float = 0.9, seed: int = 0,
                     max_len: int = MAX_LEN) -> Samples:
    """Draw `k` traces for each question, batching the questions of equal length together.

    Explained in chapters/latent-trajectories/02_experiments.md.
    """
    check_int("k", k)
    if not len(questions):
        raise ValueError("questions must be a non-empty list of digit arrays")
    gen = torch.Generator().manual_seed(seed)
    start = time.perf_counter()
    encoded = [encode(question_words(q)) for q in questions for _ in range(k)]
    plen = np.array([len(e) for e in encoded])
    prompts = torch.full((len(encoded), int(plen.max())), PAD, dtype=torch.long)
    for i, e in enumerate(encoded):
        prompts[i, :len(e)] = torch.tensor(e)
    tokens = sample(model, prompts, plen, temperature=temperature, max_len=max_len, generator=gen).numpy()
    answers = np.array([int(np.sum(q) % 10) for q in questions])
    return Samples(tokens=tokens, question=np.repeat(np.arange(len(questions)), k),
                   repeat=np.tile(np.arange(k), len(questions)), prompt_len=plen, answer=answers,
                   seconds=time.perf_counter() - start)


@torch.no_grad()
def read_traces(model: Transformer, tokens: np.ndarray, positions: np.ndarray, batch: int = 256):
    """One forward pass over finished traces: the residual stream after every block (the embedding layer excluded,
    as in the paper's code), float32 (n, n_layers, length, d), and the next-token distribution (final layer,
    temperature 1) at `positions[i]` of trace i, (n, vocab); the all-padding tail of the batch is not computed.

    Explained in chapters/latent-trajectories/02_experiments.md.
    """
    if tokens.ndim != 2 or len(positions) != len(tokens):
        raise ValueError(f"tokens must be (n_traces, length) with one position per trace, got shape {tokens.shape} "
                         f"and {len(positions)} positions")
    width = int((tokens != PAD).sum(1).max())
    H = np.zeros((len(tokens), model.cfg.n_layers, tokens.shape[1], model.cfg.d_model), dtype=np.float32)
    probs = []
    for i in range(0, len(tokens), batch):
        out = model(torch.from_numpy(tokens[i:i + batch, :width]).long())
        H[i:i + batch, :, :width] = torch.stack(out.residuals[1:], dim=1).numpy()
        idx = torch.as_tensor(positions[i:i + batch]).long().clamp(0, width - 1)
        probs.append(torch.softmax(out.logits[torch.arange(len(idx)), idx], dim=-1).numpy())
    return H, np.concatenate(probs)


def make_checkpoint(path, steps: int = 2500, seed: int = 0, save_every: int = 0, log=None, command: str = "",
                    **kwargs):
    """Train `train_reasoner(steps, seed=seed, **kwargs)` and save it with its provenance to `path` (the file that
    the experiments notebook loads; `ship` makes it). With `save_every > 0`, the model so far is also saved every
    `save_every` steps (its provenance then gives the steps done), and `log(step, loss)` is called there. `command`
    is recorded as what made the file (by default this call).
    Explained in chapters/latent-trajectories/02_experiments.md."""
    from ..nn import save_checkpoint

    command = command or (f"from repro.latent_trajectories import make_checkpoint; make_checkpoint('{path}', "
                          f"steps={steps}, seed={seed})")
    start, losses = time.perf_counter(), []

    def save(model, done):
        info = {"steps": int(done), "seconds": time.perf_counter() - start, "seed": int(seed),
                "final_loss": float(np.mean(losses[-50:])), "loss_every_50": losses[::50],
                "batch_size": int(kwargs.get("batch_size", 32)), "teacher": vars(kwargs.get("teacher", Teacher()))}
        save_checkpoint(model, path, command=command, **info)
        return info

    def callback(step, model, loss):
        losses.append(loss)
        if save_every and step % save_every == 0 and step < steps:
            save(model, step)
            model.train()
            if log is not None:
                log(step, float(np.mean(losses[-50:])))

    model, _ = train_reasoner(steps, seed=seed, callback=callback, **kwargs)
    return model, save(model, steps)


def checkpoint_path():
    """``data/latent-trajectories/reasoner.pt``, the shipped reasoner. Explained in
    chapters/latent-trajectories/02_experiments.md."""
    from .. import DATA_DIR

    return DATA_DIR / "latent-trajectories" / "reasoner.pt"


def ship(seed: int | None = None) -> list:
    """Train the shipped reasoner (2,500 steps, seed 0) and write it to `checkpoint_path()`; returns the path. The
    chapter ships one model, so `seed` must be None. `python -m repro.book ship latent-trajectories` calls it (on
    one thread). Explained in chapters/latent-trajectories/02_experiments.md.
    """
    from ..nn.checkpoint import ship_command

    if seed is not None:
        raise ValueError("latent-trajectories ships one reasoner (seed 0), not one per seed: run it without --seed")
    make_checkpoint(checkpoint_path(), steps=2500, seed=0, command=ship_command("latent-trajectories"))
    return [checkpoint_path()]
