"""Block pursuit, AND-OR templates, SUM-MAX parsing, term evidence, prescriptions and structural expansion.

Explained in chapters/and-or-templates/01_theory.md (the algorithm on a toy matrix) and
chapters/and-or-templates/02_experiments.md (object and scene templates). A block is a set of rows (images) and
columns (terminals) of the response matrix R with one fitted (beta_j, log z_j) per column; its score is
sum over rows and columns of (beta_j R_ij - log z_j - gamma), gamma the sparsity penalty per term. The algorithm
alternates a column step (the M-step: fit beta on the block's rows, keep the columns whose gain beats gamma, with
local mutual exclusivity among them) and a row step (the E-step: re-match, keep the rows whose parse score under the
block is positive). The penalty form, the exclusivity rule and the thresholds are our reconstructions.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..common import check_2d, check_int, check_non_negative
from .canvas import OBJECTS, TERMINALS
from .maxent import fit_beta, gain


@dataclass
class Block:
    """Columns `cols` (terminal indices), fitted `beta`, `logz`, the training rows it explains (bool mask) and its
    penalised score (chapters/and-or-templates/01_theory.md)."""

    cols: np.ndarray
    beta: np.ndarray
    logz: np.ndarray
    rows: np.ndarray
    score: float = 0.0

    def row_scores(self, R) -> np.ndarray:
        """Score of every row of R under this block: sum_j beta_j R_ij - log z_j."""
        return (R[:, self.cols] * self.beta).sum(1) - self.logz.sum()

    def terms(self, r) -> np.ndarray:
        """The term-level evidence of one response vector r: beta_j r_j - log z_j per column."""
        return self.beta * np.asarray(r)[self.cols] - self.logz


def scene_conflict(j: int, k: int) -> bool:
    """Local mutual exclusivity of scene terminals: two objects (of any classes) within one cell of each other, or
    two lines of the same kind within one row (column) of each other, explain the same image region
    (chapters/and-or-templates/01_theory.md)."""
    a, b = TERMINALS[j], TERMINALS[k]
    same = a[0] == b[0] or (a[0] in OBJECTS and b[0] in OBJECTS)
    return same and abs(a[1] - b[1]) <= 1 and abs(a[2] - b[2]) <= 1


def _columns(R, rows, ref, gamma, allowed, conflict):
    """Column step: fit beta on the rows, keep columns with gain > gamma, greedily, skipping conflicts."""
    beta, logz = fit_beta(R[rows].mean(0), ref)
    g = gain(R[rows].mean(0), beta, logz)
    chosen = []
    for j in np.argsort(-g):
        if g[j] <= gamma:
            break
        if allowed[j] and not any(conflict(j, k) for k in chosen):
            chosen.append(int(j))
    cols = np.array(sorted(chosen), dtype=int)
    return cols, beta[cols], logz[cols], g[cols]


def grow_block(R, ref, seed_rows, gamma, allowed, conflict=lambda j, k: False, iters: int = 10) -> Block | None:
    """Alternate the column and row steps from `seed_rows` until the rows stop changing
    (chapters/and-or-templates/01_theory.md)."""
    rows = np.asarray(seed_rows, dtype=bool)
    for _ in range(check_int("iters", iters)):
        if rows.sum() < 2:
            return None
        cols, beta, logz, g = _columns(R, rows, ref, gamma, allowed, conflict)
        if cols.size == 0:
            return None
        block = Block(cols, beta, logz, rows)
        new_rows = block.row_scores(R) > 0
        if np.array_equal(new_rows, rows):
            break
        rows = new_rows
    block.rows = rows
    if rows.sum() < 2:
        return None
    block.cols, block.beta, block.logz, g = _columns(R, rows, ref, gamma, allowed, conflict)
    if block.cols.size == 0:
        return None
    block.score = float(rows.sum() * (g - gamma).sum())
    return block


def block_pursuit(R, ref, gamma: float = 1.0, min_rows: int = 5, max_blocks: int = 12, n_seeds: int = 1,
                  conflict=scene_conflict, exclusive_rows: bool = False, allowed=None, threshold: float = 0.5):
    """Blocks of R (N x D responses in [0, 1]) against the reference sample ref (M x D), best first.

    Seeds are the columns with the most rows responding (R_ij > `threshold`) among those whose gain beats gamma:
    the best-supported part comes first. The first `n_seeds` seeds are grown by `grow_block` and the best grown
    block is kept and its columns and their conflicts are no longer available (local
    mutual exclusivity); with `exclusive_rows` its rows are also removed (one block per image). Stops when no block
    has `min_rows` rows and a positive penalised score (chapters/and-or-templates/01_theory.md)."""
    R, ref = np.asarray(R, dtype=float), np.asarray(ref, dtype=float)
    check_2d("R", R)
    check_2d("ref", ref)
    if R.shape[1] != ref.shape[1]:
        raise ValueError(f"R has {R.shape[1]} columns but ref has {ref.shape[1]}: they must share the terminals")
    check_non_negative("gamma", gamma)
    min_rows = check_int("min_rows", min_rows)
    allowed = np.ones(R.shape[1], bool) if allowed is None else np.asarray(allowed, bool).copy()
    live = np.ones(R.shape[0], bool)
    blocks = []
    for _ in range(check_int("max_blocks", max_blocks)):
        support = (R > threshold) & live[:, None]
        counts = support.sum(0)
        rbar = np.where(counts > 0, (R * support).sum(0) / np.maximum(counts, 1), 0)
        beta, logz = fit_beta(rbar, ref)
        g = gain(rbar, beta, logz)
        single = np.where(allowed & (counts >= min_rows) & (g > gamma), counts + g / (1 + g.max()), -np.inf)
        best = None
        for j in np.argsort(-single)[:n_seeds]:
            if not np.isfinite(single[j]):
                break
            block = grow_block(R, ref, support[:, j], gamma, allowed, conflict)
            if block is not None and exclusive_rows:
                block.rows &= live
            if block is not None and block.rows.sum() >= min_rows and block.score > 0 and \
                    (best is None or block.score > best.score):
                best = block
        if best is None:
            break
        blocks.append(best)
        for j in best.cols:
            allowed &= ~np.array([conflict(j, k) or k == j for k in range(R.shape[1])])
        if exclusive_rows:
            live &= ~best.rows
    return blocks


# ------------------------------------------------------------------------------------------------ AND-OR templates

@dataclass
class Template:
    """An AND of slots, each slot an OR of branches (blocks) (chapters/and-or-templates/01_theory.md)."""

    slots: list = field(default_factory=list)

    @property
    def blocks(self) -> list:
        return [b for slot in self.slots for b in slot]

    def terminals(self) -> set:
        """All terminal indices the template uses."""
        return {int(j) for b in self.blocks for j in b.cols}

    def n_parameters(self) -> int:
        """Three numbers per terminal: its geometry (which cell), beta and log z."""
        return 3 * sum(len(b.cols) for b in self.blocks)


def group_or_slots(blocks, overlap: float = 0.2) -> Template:
    """Blocks whose training rows are (nearly) disjoint are alternatives, OR branches of one slot; the others are
    AND children. Greedy: a block joins the first slot all of whose branches share at most `overlap` of the smaller
    row set with it (chapters/and-or-templates/01_theory.md)."""
    slots = []
    for b in blocks:
        for slot in slots:
            if all((b.rows & o.rows).sum() <= overlap * min(b.rows.sum(), o.rows.sum()) for o in slot):
                slot.append(b)
                break
        else:
            slots.append([b])
    return Template(slots)


@dataclass
class Parse:
    """SUM-MAX parse of N images: chosen branch per slot (N, S), slot scores (N, S), total score (N,)
    (chapters/and-or-templates/01_theory.md)."""

    branch: np.ndarray
    slot_scores: np.ndarray
    score: np.ndarray


def parse(template: Template, R) -> Parse:
    """MAX over the branches of each slot, SUM over the slots (chapters/and-or-templates/01_theory.md)."""
    R = np.atleast_2d(np.asarray(R, dtype=float))
    if template.blocks and max(template.terminals()) >= R.shape[1]:
        raise ValueError(f"R has {R.shape[1]} columns, fewer than the template's terminals need")
    if not template.slots:
        z = np.zeros((R.shape[0], 0))
        return Parse(z.astype(int), z, np.zeros(R.shape[0]))
    per_slot = [np.stack([b.row_scores(R) for b in slot], 1) for slot in template.slots]
    branch = np.stack([s.argmax(1) for s in per_slot], 1)
    slot_scores = np.stack([s.max(1) for s in per_slot], 1)
    return Parse(branch, slot_scores, slot_scores.sum(1))


def evidence(template: Template, r) -> list[tuple[int, int, int, float]]:
    """Term-level evidence of one image: (slot, branch, terminal, beta_j r_j - log z_j) for every terminal of the
    chosen branches; the terms sum to the score (chapters/and-or-templates/01_theory.md)."""
    r = np.asarray(r, dtype=float)
    p = parse(template, r[None])
    out = []
    for s, slot in enumerate(template.slots):
        b = int(p.branch[0, s])
        out += [(s, b, int(j), float(t)) for j, t in zip(slot[b].cols, slot[b].terms(r))]
    return out


def prescription(template: Template, r) -> tuple[int, float]:
    """The most negative term of an image's evidence: (terminal, its value). A negative term means the terminal's
    part is missing or misplaced, so the prescription is "put that part there"
    (chapters/and-or-templates/01_theory.md)."""
    ev = evidence(template, r)
    if not ev:
        raise ValueError("the template has no terminals, so there is no evidence to prescribe from")
    s, b, j, t = min(ev, key=lambda e: e[3])
    return j, t


# ------------------------------------------------------------------------------------------------ structural expansion

def expansion_candidates(template: Template, R, consistency: float = 0.5) -> np.ndarray:
    """The dual threshold: images whose matching gain fails (some slot has a negative best branch) while their
    structural consistency (the share of slots that match with positive evidence) reaches `consistency`
    (chapters/and-or-templates/02_experiments.md)."""
    p = parse(template, R)
    positive = p.slot_scores > 0
    return (~positive).any(1) & (positive.mean(1) >= consistency)


def expand(template: Template, R_pool, ref, gamma: float = 1.0, min_rows: int = 5, consistency: float = 0.5,
           conflict=scene_conflict) -> tuple[Template, list]:
    """Semi-supervised structural expansion: block pursuit on the candidates of an unlabeled pool, over the
    terminals the template does not use (nor conflict with); each new block becomes a new OR branch of the slot that
    failed most often in its rows. Returns the grown template and the new (slot, block) pairs
    (chapters/and-or-templates/02_experiments.md)."""
    R_pool = np.asarray(R_pool, dtype=float)
    cand = expansion_candidates(template, R_pool, consistency)
    used = template.terminals()
    allowed = np.array([not any(conflict(j, k) or j == k for k in used) for j in range(R_pool.shape[1])])
    grown = Template([list(slot) for slot in template.slots])
    if cand.sum() < min_rows:
        return grown, []
    sub = R_pool[cand]
    new = block_pursuit(sub, ref, gamma=gamma, min_rows=min_rows, conflict=conflict, allowed=allowed)
    failing = parse(template, sub).slot_scores <= 0
    added = []
    for b in new:
        s = int(failing[b.rows].sum(0).argmax())
        grown.slots[s].append(b)
        added.append((s, b))
    return grown, added
