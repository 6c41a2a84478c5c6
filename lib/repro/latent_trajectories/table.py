"""From sampled traces to one row per trace: correctness, thinking tokens, the LT signals and every baseline.

Explained in chapters/latent-trajectories/02_experiments.md.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .model import Samples, read_traces
from .signals import layer_baselines, lt_signals, segment_means, step_signals, thinking_span
from .traces import ANS, TOKEN


@dataclass
class TraceTable:
    """`rows`: one row per trace (question, repeat, correct, answer, think_tokens, n_segments, the signals and the
    baselines); `steps`: per trace, the per-step signals and the thinking tokens read after each step; `segments`:
    per trace, its segment states (n_layers, N, d), kept for the figures; `seconds`: time spent per stage.

    Explained in chapters/latent-trajectories/02_experiments.md.
    """
    rows: pd.DataFrame
    steps: list[dict]
    segments: list[np.ndarray]
    seconds: dict


def answer_of(tokens, prompt_len: int) -> int:
    """The digit written after the first ANS of a trace, or -1 when there is none.

    Explained in chapters/latent-trajectories/02_experiments.md.
    """
    tokens = np.asarray(tokens)
    ans = np.flatnonzero(tokens[prompt_len:] == ANS)
    if not len(ans):
        return -1
    pos = prompt_len + int(ans[0]) + 1
    return int(tokens[pos]) if pos < len(tokens) and tokens[pos] <= TOKEN["9"] else -1


def confidence(probs: np.ndarray) -> dict[str, np.ndarray]:
    """The official output-confidence baselines from a next-token distribution (n, vocab): the top-2 margin of the
    *probabilities* (the code calls it logit margin), the entropy, and the inverse top-1 probability (its
    "perplexity"). Explained in chapters/latent-trajectories/02_experiments.md."""
    top2 = np.sort(probs, axis=1)[:, -2:]
    return {"logit_margin": top2[:, 1] - top2[:, 0],
            "entropy": -(probs * np.log(probs + 1e-12)).sum(1),
            "perplexity": 1.0 / (top2[:, 1] + 1e-12)}


def trace_table(model, samples: Samples) -> TraceTable:
    """Run the model over every finished trace once, and compute each trace's signals and baselines.

    Explained in chapters/latent-trajectories/02_experiments.md.
    """
    t0 = time.perf_counter()
    spans = [thinking_span(t, p) for t, p in zip(samples.tokens, samples.prompt_len)]
    ans_pos = np.array([end if end < samples.tokens.shape[1] and samples.tokens[i, end] == ANS else -1
                        for i, (_, end) in enumerate(spans)])
    H, probs = read_traces(model, samples.tokens, ans_pos)
    conf = confidence(probs)
    t2 = time.perf_counter()
    rows, steps, segs = [], [], []
    for i, (tok, plen) in enumerate(zip(samples.tokens, samples.prompt_len)):
        seg = segment_means(H[i], tok, plen)
        start, end = spans[i]
        answer = answer_of(tok, plen)
        row = {"question": int(samples.question[i]), "repeat": int(samples.repeat[i]), "answer": answer,
               "correct": answer == int(samples.answer[samples.question[i]]), "think_tokens": end - start,
               "n_segments": seg.shape[1], **lt_signals(seg)}
        row.update(layer_baselines(seg) if seg.shape[1] else {"layer_mag": np.nan, "layer_ang": np.nan})
        for k, v in conf.items():
            row[k] = float(v[i]) if ans_pos[i] >= 0 else np.nan
        rows.append(row)
        bounds = np.flatnonzero(tok[start:end] == TOKEN["NL"])
        st = step_signals(seg) if seg.shape[1] >= 2 else {"net_by_step": np.zeros(0), "cum_by_step": np.zeros(0)}
        st["tokens_read"] = bounds[2:] if len(bounds) > 2 else np.zeros(0, dtype=int)   # tokens seen after K steps
        steps.append(st)
        segs.append(seg.astype(np.float32))
    t3 = time.perf_counter()
    return TraceTable(rows=pd.DataFrame(rows), steps=steps, segments=segs,
                      seconds={"forward pass": t2 - t0, "signals": t3 - t2})
