"""A mixture of small algorithmic tasks that are memorized and generalized at different times, plus a control.

Explained in chapters/moe-grokking/01_theory. Every task shares the number tokens 0..p-1; task g has its own
operation token p+g. A sample is the sequence

    [op_g, a, b, c]        with c = f_g(a, b) mod p,

and only the answer position (index 3) is scored: the model reads [op_g, a, b] and must predict c. Each group has
all p*p pairs (a, b); a seeded permutation puts a fraction of them in its training set and the rest in its test set.
Group 0 is the control: its answers come from a random lookup table, so its training pairs can be memorized but its
test pairs are unpredictable (chance accuracy 1/p).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..common import check_int

#: The operations a group can use (name -> f(a, b, p)). "random" is the random-label control.
OPERATIONS = {
    "a+b": lambda a, b, p: (a + b) % p,
    "a-b": lambda a, b, p: (a - b) % p,
    "a*b": lambda a, b, p: (a * b) % p,
    "a^2+b^2": lambda a, b, p: (a * a + b * b) % p,
    "ab+a": lambda a, b, p: (a * b + a) % p,
    "a^2+ab+b^2": lambda a, b, p: (a * a + a * b + b * b) % p,
    "random": None,
}

#: The default mixture of the chapter: (operation, fraction of the p*p pairs used for training). The rule groups differ
#: in their rule and in their training fraction, so that they are memorized and generalized at different times (chosen
#: on a development seed, chapters/moe-grokking/02_experiments.md); the control has few pairs, all memorizable.
DEFAULT_GROUPS = (("random", 0.1), ("a+b", 0.5), ("a-b", 0.6), ("a^2+b^2", 0.4), ("a*b", 0.7), ("ab+a", 0.8))

ANSWER_POSITION = 3
SEQ_LEN = 4


@dataclass
class GrokkingMix:
    """The data of one mixture. Tokens are (N, 4) int64 tensors; `*_group` says which group each row belongs to.

    Explained in chapters/moe-grokking/01_theory.md.
    """

    p: int
    names: tuple[str, ...]
    train_fractions: tuple[float, ...]
    train_tokens: torch.Tensor
    train_group: np.ndarray
    test_tokens: torch.Tensor
    test_group: np.ndarray
    seed: int

    @property
    def n_groups(self) -> int:
        return len(self.names)

    @property
    def vocab_size(self) -> int:
        """p number tokens, then one operation token per group."""
        return self.p + self.n_groups

    @property
    def control(self) -> list[int]:
        """Indices of the random-label groups."""
        return [g for g, n in enumerate(self.names) if n == "random"]

    def group(self, g: int, split: str = "train") -> torch.Tensor:
        """The token rows of group `g` in `split` ("train" or "test")."""
        if not 0 <= g < self.n_groups:
            raise ValueError(f"g must be a group index in 0..{self.n_groups - 1}, got {g!r}")
        if split not in ("train", "test"):
            raise ValueError(f"split must be 'train' or 'test', got {split!r}")
        tokens, groups = (self.train_tokens, self.train_group) if split == "train" else (self.test_tokens,
                                                                                          self.test_group)
        return tokens[torch.from_numpy(groups == g)]

    def sampler(self, batch_size: int, seed: int = 0):
        """A `batches(step)` callable for `repro.nn.train_lm`: (tokens, answer mask), rows drawn with replacement
        from the union of every group's training set."""
        check_int("batch_size", batch_size)
        gen = torch.Generator().manual_seed(int(seed))
        n = self.train_tokens.shape[0]

        def batches(step):
            idx = torch.randint(n, (int(batch_size),), generator=gen)
            tokens = self.train_tokens[idx]
            return tokens, answer_mask(tokens)
        return batches


def answer_mask(tokens: torch.Tensor) -> torch.Tensor:
    """Bool mask (N, 4) that is True only at the answer position: the only target the loss scores.

    Explained in chapters/moe-grokking/01_theory.md.
    """
    if tokens.dim() != 2 or tokens.shape[1] != SEQ_LEN:
        raise ValueError(f"tokens must have shape (N, {SEQ_LEN}), got {tuple(tokens.shape)}")
    mask = torch.zeros(tokens.shape, dtype=torch.bool)
    mask[:, ANSWER_POSITION] = True
    return mask


def make_grokking_mix(p: int = 31, groups=DEFAULT_GROUPS, seed: int = 0) -> GrokkingMix:
    """Build the mixture: for each (operation, train fraction) in `groups`, all p*p pairs split at random.

    `p` should be prime (so that the arithmetic groups are fields); the random-label table and every split are drawn
    from `numpy.random.default_rng(seed)`, so the same arguments give the same data.
    Explained in chapters/moe-grokking/01_theory.md.
    """
    check_int("p", p, 3)
    groups = tuple(groups)
    if not groups:
        raise ValueError("groups must name at least one (operation, train_fraction) pair")
    for op, frac in groups:
        if op not in OPERATIONS:
            raise ValueError(f"groups: unknown operation {op!r}; choose from {sorted(OPERATIONS)}")
        if not 0 < frac < 1:
            raise ValueError(f"groups: train fraction of {op!r} must lie strictly between 0 and 1, got {frac!r}")
    p = int(p)
    rng = np.random.default_rng(seed)
    a, b = (x.ravel() for x in np.meshgrid(np.arange(p), np.arange(p), indexing="ij"))
    train, test, g_train, g_test = [], [], [], []
    for g, (op, frac) in enumerate(groups):
        c = rng.integers(0, p, a.size) if op == "random" else OPERATIONS[op](a, b, p)
        rows = np.stack([np.full(a.size, p + g), a, b, c], axis=1)
        perm = rng.permutation(a.size)
        n_train = max(1, min(a.size - 1, int(round(frac * a.size))))
        train.append(rows[perm[:n_train]])
        test.append(rows[perm[n_train:]])
        g_train.append(np.full(n_train, g))
        g_test.append(np.full(a.size - n_train, g))
    return GrokkingMix(p=p, names=tuple(op for op, _ in groups), train_fractions=tuple(float(f) for _, f in groups),
                       train_tokens=torch.from_numpy(np.concatenate(train)).long(),
                       train_group=np.concatenate(g_train), test_tokens=torch.from_numpy(np.concatenate(test)).long(),
                       test_group=np.concatenate(g_test), seed=int(seed))
