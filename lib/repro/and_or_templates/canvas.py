"""The synthetic world: objects built from primitives, five composition themes with a known AND-OR, bad images.

Explained in chapters/and-or-templates/02_experiments.md ("A world with a known grammar"). A canvas is SIZE x SIZE
grey pixels cut into a GRID x GRID lattice of CELL-pixel cells; a theme is an AND of slots, each slot an OR of
branches, each branch a set of scene terminals (an object class in a cell, or a line in a row or column).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..common import check_choice, check_int

SIZE, GRID, CELL = 49, 7, 7
OBJECTS = ("tree", "person", "mountain")
LINES = ("hline", "vline")
KINDS = OBJECTS + LINES


def cell_centre(c: int) -> float:
    """Pixel coordinate of the centre of lattice cell `c` (chapters/and-or-templates/02_experiments.md)."""
    return CELL * c + (CELL - 1) / 2


def terminal_names() -> list[tuple[str, int, int]]:
    """All scene terminals in a fixed order: (class, row cell, column cell) for objects, then (hline, row, -1) and
    (vline, -1, column) (chapters/and-or-templates/02_experiments.md)."""
    names = [(k, y, x) for k in OBJECTS for y in range(GRID) for x in range(GRID)]
    names += [("hline", y, -1) for y in range(GRID)] + [("vline", -1, x) for x in range(GRID)]
    return names


TERMINALS = terminal_names()
INDEX = {t: j for j, t in enumerate(TERMINALS)}


def terminal_label(t) -> str:
    """A short human name of terminal `t` (an index or a tuple), e.g. 'person@(2,4)' or 'hline@row 2'
    (chapters/and-or-templates/02_experiments.md)."""
    k, y, x = TERMINALS[t] if isinstance(t, (int, np.integer)) else t
    if k == "hline":
        return f"hline@row {y}"
    if k == "vline":
        return f"vline@col {x}"
    return f"{k}@({y},{x})"


# ------------------------------------------------------------------------------------------------ the themes

def _t(*names):
    return frozenset(INDEX[n] for n in names)


#: theme -> list of slots (AND); slot -> list of branches (OR); branch -> frozenset of terminal indices.
THEMES = {
    "thirds": [[_t(("person", 2, 2)), _t(("person", 2, 4)), _t(("person", 4, 2)), _t(("person", 4, 4))],
               [_t(("hline", 2, -1)), _t(("hline", 4, -1))]],
    "symmetry": [[_t(("tree", 3, 1))], [_t(("tree", 3, 5))], [_t(("person", 3, 3))]],
    "diagonal": [[_t(("tree", 3, 3))], [_t(("tree", 1, 1), ("tree", 5, 5)), _t(("tree", 1, 5), ("tree", 5, 1))]],
    "centred-frame": [[_t(("mountain", 3, 3))], [_t(("hline", 0, -1))], [_t(("hline", 6, -1))],
                      [_t(("vline", -1, 0))], [_t(("vline", -1, 6))]],
    "triangle": [[_t(("person", 1, 3))], [_t(("mountain", 5, 1))], [_t(("mountain", 5, 5))]],
}
THEME_NAMES = tuple(THEMES)


def true_terminals(theme: str) -> set[int]:
    """Every terminal of the true AND-OR of `theme` (chapters/and-or-templates/02_experiments.md)."""
    check_choice("theme", theme, THEME_NAMES)
    return {j for slot in THEMES[theme] for branch in slot for j in branch}


# ------------------------------------------------------------------------------------------------ scenes

@dataclass(frozen=True)
class Item:
    """One drawn element: an object (kind, centre y, x, scale) or a line (kind, position; the other coordinate -1),
    with the terminal of the rule it stands for (-1 for clutter) (chapters/and-or-templates/02_experiments.md)."""

    kind: str
    y: float
    x: float
    scale: float = 1.0
    rule: int = -1


@dataclass
class Scene:
    """A scene: its items, theme, whether it follows the rule, its adherence deviation and rating, the branch
    chosen in each slot and the perturbations applied (chapters/and-or-templates/02_experiments.md)."""

    items: list
    theme: str = ""
    good: bool = True
    deviation: float = 0.0
    rating: float = 1.0
    branches: tuple = ()
    perturbations: list = field(default_factory=list)
    clutter_seed: int = 0


def _item_for(j: int, rng, jitter: float) -> Item:
    k, cy, cx = TERMINALS[j]
    dy, dx = rng.uniform(-jitter, jitter, 2)
    if k == "hline":
        return Item(k, cell_centre(cy) + dy, -1, 1.0, j)
    if k == "vline":
        return Item(k, -1, cell_centre(cx) + dx, 1.0, j)
    return Item(k, cell_centre(cy) + dy, cell_centre(cx) + dx, rng.uniform(0.9, 1.1), j)


def _distance_cells(item: Item) -> float:
    """How far (in cells) an item sits from its rule terminal's cell centre."""
    k, cy, cx = TERMINALS[item.rule]
    if k == "hline":
        return abs(item.y - cell_centre(cy)) / CELL
    if k == "vline":
        return abs(item.x - cell_centre(cx)) / CELL
    return float(np.hypot(item.y - cell_centre(cy), item.x - cell_centre(cx))) / CELL


def rating_of(deviation: float, rng, noise: float = 0.05) -> float:
    """The synthetic human rating: exp(-deviation / 1.5) plus Gaussian noise (our construction, not the paper's;
    chapters/and-or-templates/02_experiments.md)."""
    return float(np.exp(-deviation / 1.5) + noise * rng.standard_normal())


def deviation_of(scene: Scene) -> float:
    """Adherence deviation of a scene: the summed distance in cells of its rule items from their cells (capped at
    3), plus 3 for each removed item and 2 for each item of the wrong class
    (chapters/and-or-templates/02_experiments.md)."""
    dev = sum(min(3.0, _distance_cells(it)) for it in scene.items if it.rule >= 0)
    for p in scene.perturbations:
        dev += {"remove": 3.0, "swap": 2.0}.get(p[0], 0.0)
    return float(dev)


def sample_good(theme: str, rng, jitter: float = 1.5, branches=None, extra_object: float = 0.3) -> Scene:
    """A scene that follows `theme`: one branch per slot (uniform, or `branches[s]` restricted to a list of
    allowed branch numbers), items jittered by up to `jitter` pixels, maybe one off-rule object
    (chapters/and-or-templates/02_experiments.md)."""
    check_choice("theme", theme, THEME_NAMES)
    chosen, items = [], []
    for s, slot in enumerate(THEMES[theme]):
        allowed = list(range(len(slot))) if branches is None or branches[s] is None else list(branches[s])
        b = int(rng.choice(allowed))
        chosen.append(b)
        items += [_item_for(j, rng, jitter) for j in sorted(slot[b])]
    if rng.random() < extra_object:
        items.append(Item(str(rng.choice(OBJECTS)), rng.uniform(6, SIZE - 7), rng.uniform(6, SIZE - 7),
                          rng.uniform(0.9, 1.1), -1))
    scene = Scene(items, theme, True, 0.0, 0.0, tuple(chosen), [], int(rng.integers(2**31)))
    scene.deviation = deviation_of(scene)
    scene.rating = rating_of(scene.deviation, rng)
    return scene


def _move(item: Item, rng) -> Item:
    """The item moved 1 to 3 cells away from where it is, staying on the canvas."""
    for _ in range(100):
        step = rng.integers(1, 4)
        ang = rng.uniform(0, 2 * np.pi)
        dy, dx = CELL * step * np.sin(ang), CELL * step * np.cos(ang)
        y, x = item.y + (dy if item.kind != "vline" else 0), item.x + (dx if item.kind != "hline" else 0)
        ok_y = item.kind == "vline" or 4 <= y <= SIZE - 5
        ok_x = item.kind == "hline" or 4 <= x <= SIZE - 5
        if ok_y and ok_x and (abs(y - item.y) > CELL * 0.9 or abs(x - item.x) > CELL * 0.9):
            return replace(item, y=float(y), x=float(x))
    return item


def perturb(scene: Scene, rng, n: int | None = None, kinds=("move", "remove", "swap")) -> Scene:
    """A rule-violating copy of a good scene: `n` (1 or 2 when None) perturbations of distinct rule items, each a
    move (1 to 3 cells), a removal or a class swap; the record names the perturbed item
    (chapters/and-or-templates/02_experiments.md)."""
    n = int(rng.integers(1, 3)) if n is None else check_int("n", n)
    items = list(scene.items)
    rule_ids = [i for i, it in enumerate(items) if it.rule >= 0]
    targets = rng.choice(rule_ids, size=min(n, len(rule_ids)), replace=False)
    perturbations = []
    for i in sorted(targets, reverse=True):
        it = items[i]
        kind = str(rng.choice(kinds)) if it.kind in OBJECTS else str(rng.choice([k for k in kinds if k != "swap"]))
        if kind == "move":
            items[i] = _move(it, rng)
        elif kind == "swap":
            items[i] = replace(it, kind=str(rng.choice([k for k in OBJECTS if k != it.kind])), rule=-1)
        perturbations.append((kind, it.rule, it))
        if kind == "remove":
            items.pop(i)
    bad = Scene(items, scene.theme, False, 0.0, 0.0, scene.branches, perturbations, scene.clutter_seed)
    bad.deviation = deviation_of(bad)
    bad.rating = rating_of(bad.deviation, rng)
    return bad


def random_layout(rng, n_objects=(1, 4), p_line: float = 0.5) -> Scene:
    """A reference scene q: 1 to 3 objects at uniform positions, lines at uniform rows/columns
    (chapters/and-or-templates/01_theory.md, the reference distribution)."""
    items = [Item(str(rng.choice(OBJECTS)), rng.uniform(5, SIZE - 6), rng.uniform(5, SIZE - 6),
                  rng.uniform(0.9, 1.1)) for _ in range(int(rng.integers(*n_objects)))]
    for kind in LINES:
        if rng.random() < p_line:
            pos = rng.uniform(2, SIZE - 3)
            items.append(Item(kind, pos if kind == "hline" else -1, pos if kind == "vline" else -1))
    return Scene(items, "", False, 0.0, 0.0, (), [], int(rng.integers(2**31)))


# ------------------------------------------------------------------------------------------------ drawing

_YY, _XX = np.mgrid[0:SIZE, 0:SIZE].astype(float)


def _disk(y, x, r):
    return np.clip(r + 0.5 - np.hypot(_YY - y, _XX - x), 0, 1)


def _bar(y0, y1, x, half_width):
    inside_y = np.clip(np.minimum(_YY - y0, y1 - _YY) + 0.5, 0, 1)
    return inside_y * np.clip(half_width + 0.5 - np.abs(_XX - x), 0, 1)


def _segment(y0, x0, y1, x1, half_width):
    d = np.array([y1 - y0, x1 - x0])
    t = np.clip(((_YY - y0) * d[0] + (_XX - x0) * d[1]) / (d @ d), 0, 1)
    dist = np.hypot(_YY - (y0 + t * d[0]), _XX - (x0 + t * d[1]))
    return np.clip(half_width + 0.5 - dist, 0, 1)


def draw_item(item: Item) -> np.ndarray:
    """The SIZE x SIZE intensity of one item: tree = crown disk on a trunk bar, person = head disk on a body bar,
    mountain = two strokes meeting at a peak, lines across the canvas (chapters/and-or-templates/02_experiments.md)."""
    y, x, s = item.y, item.x, item.scale
    if item.kind == "tree":
        return np.maximum(_disk(y - 2 * s, x, 3.2 * s), _bar(y + 1, y + 5 * s, x, 0.8))
    if item.kind == "person":
        return np.maximum(_disk(y - 4 * s, x, 1.6 * s), _bar(y - 2.2 * s, y + 4.5 * s, x, 0.9))
    if item.kind == "mountain":
        return np.maximum(_segment(y + 3 * s, x - 5 * s, y - 3 * s, x, 0.6), _segment(y - 3 * s, x, y + 3 * s, x + 5 * s, 0.6))
    if item.kind == "hline":
        return np.clip(1.1 - np.abs(_YY - y), 0, 1)
    if item.kind == "vline":
        return np.clip(1.1 - np.abs(_XX - x), 0, 1)
    raise ValueError(f"unknown item kind {item.kind!r}; use one of {KINDS}")


def _clutter(rng, n: int) -> np.ndarray:
    img = np.zeros((SIZE, SIZE))
    for _ in range(n):
        y, x = rng.uniform(0, SIZE, 2)
        if rng.random() < 0.5:
            img = np.maximum(img, 0.6 * _disk(y, x, 0.8))
        else:
            a = rng.uniform(0, np.pi)
            img = np.maximum(img, 0.6 * _segment(y, x, y + 3 * np.sin(a), x + 3 * np.cos(a), 0.4))
    return img


def render(scene: Scene, noise: float = 0.05, n_clutter: int = 4) -> np.ndarray:
    """The grey image of a scene: items, `n_clutter` faint dots and dashes, Gaussian pixel noise; deterministic
    given the scene (chapters/and-or-templates/02_experiments.md)."""
    rng = np.random.default_rng(scene.clutter_seed)
    img = _clutter(rng, n_clutter)
    for it in scene.items:
        img = np.maximum(img, draw_item(it))
    return (img + noise * rng.standard_normal(img.shape)).astype(np.float32)


def render_all(scenes) -> np.ndarray:
    """(N, SIZE, SIZE) float32 images of a list of scenes (chapters/and-or-templates/02_experiments.md)."""
    if len(scenes) == 0:
        raise ValueError("scenes is empty: give at least one Scene to render")
    return np.stack([render(s) for s in scenes])


def object_scenes(rng, n_per_class: int, reference: int) -> tuple[list, np.ndarray, np.ndarray]:
    """Training data of the object templates: `n_per_class` canvases per object class, each with one object at a
    random place among clutter and, half of the time, a horizontal line (often across the object), and `reference` canvases of clutter, lines (half of them
    through the centre) and off-centre objects. Returns (scenes, object centres (N, 2), class labels with -1 for the reference)
    (chapters/and-or-templates/02_experiments.md)."""
    scenes, centres, labels = [], [], []
    for k, kind in enumerate(OBJECTS):
        for _ in range(check_int("n_per_class", n_per_class)):
            y, x = rng.uniform(8, SIZE - 9, 2)
            items = [Item(kind, y, x, rng.uniform(0.9, 1.1))]
            if rng.random() < 0.5:                          # a horizon, half of the time across the object
                items.append(Item("hline", y + rng.uniform(-4, 4) if rng.random() < 0.5 else rng.uniform(2, SIZE - 3), -1))
            scenes.append(Scene(items, clutter_seed=int(rng.integers(2**31))))
            centres.append((round(y), round(x)))
            labels.append(k)
    for _ in range(check_int("reference", reference)):
        lay = random_layout(rng, n_objects=(0, 3))
        y, x = rng.integers(8, SIZE - 8, 2)
        if rng.random() < 0.5:                              # half of the reference sits on a line
            kind = str(rng.choice(LINES))
            lay.items.append(Item(kind, y if kind == "hline" else -1, x if kind == "vline" else -1))
        lay.items = [it for it in lay.items if it.kind in LINES or np.hypot(it.y - y, it.x - x) > 6]
        scenes.append(lay)
        centres.append((int(y), int(x)))
        labels.append(-1)
    return scenes, np.array(centres), np.array(labels)
