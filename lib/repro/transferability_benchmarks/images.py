"""A procedural shapes-and-textures world: 16x16 grey images, four source tasks and eight target tasks.

Explained in chapters/transferability-benchmarks/02_experiments.md. A shape (circle, square, triangle, cross) is
filled with a texture (stripes of one of four frequencies at one of four orientations, or dots or a checkerboard for
the targets), placed with jitter on a noisy background. Digits come from scikit-learn's 8x8 ``load_digits``,
upsampled to 16x16. Every task returns float32 images of shape (n, 16, 16) in [0, 1] and integer labels.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from repro.common import check_choice, check_int

SIZE = 16
SHAPES = ("circle", "square", "triangle", "cross")
FREQS = (1.5, 2.5, 3.5, 4.5)              # stripe cycles across the image
ANGLES = (0.0, 45.0, 90.0, 135.0)         # stripe orientation, degrees
SOURCES = {"S1": "shape x texture (32-way)", "S2": "shape (4-way)", "S3": "texture (16-way)",
           "S4": "rotated digits (10-way)"}
TARGETS = {"shape-new-texture": "shape, filled with dots or a checkerboard (4-way)",
           "frequency": "stripe frequency of a full-field grating (4-way)",
           "orientation": "stripe orientation inside a random shape (4-way)",
           "digits": "clean digits (10-way)",
           "digits-noisy": "digits under strong pixel noise (10-way)",
           "blob-count": "number of blobs, one to four (4-way)",
           "shape-clutter": "shape among random line clutter (4-way)",
           "cue-conflict": "shape, with the stripes that another shape wears in S1 (4-way)"}

_yy, _xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)


def _mask(shape: str, cy: float, cx: float, r: float) -> np.ndarray:
    dy, dx = _yy - cy, _xx - cx
    if shape == "circle":
        return (dy ** 2 + dx ** 2 <= r ** 2).astype(np.float32)
    if shape == "square":
        return ((np.abs(dy) <= 0.8 * r) & (np.abs(dx) <= 0.8 * r)).astype(np.float32)
    if shape == "triangle":
        return ((dy <= 0.8 * r) & (dy >= -r) & (np.abs(dx) <= (dy + r) * 0.55)).astype(np.float32)
    return (((np.abs(dy) <= 0.3 * r) & (np.abs(dx) <= r)) | ((np.abs(dx) <= 0.3 * r) & (np.abs(dy) <= r))
            ).astype(np.float32)


def _stripes(freq: float, angle: float, phase: float) -> np.ndarray:
    a = np.deg2rad(angle)
    u = (_xx * np.cos(a) + _yy * np.sin(a)) / SIZE
    return 0.5 + 0.5 * np.sin(2 * np.pi * freq * u + phase)


def _texture(kind, rng) -> np.ndarray:
    if kind == "dots":
        p = rng.integers(3, 5)
        return (((_yy.astype(int) % p) == 0) & ((_xx.astype(int) % p) == 0)).astype(np.float32) * 0.6 + 0.4
    if kind == "checker":
        p = rng.integers(2, 4)
        return (((_yy.astype(int) // p + _xx.astype(int) // p) % 2) * 0.6 + 0.4).astype(np.float32)
    freq, angle = kind
    return _stripes(freq, angle, rng.uniform(0, 2 * np.pi))


def draw(shape: str, texture, rng: np.random.Generator, noise: float = 0.1) -> np.ndarray:
    """One 16x16 image: ``shape`` filled with ``texture`` ((frequency, angle), "dots" or "checker").

    Explained in chapters/transferability-benchmarks/02_experiments.md. The centre jitters by up to 2 pixels, the
    radius is 4.5 to 6.5 pixels, the background is dim and ``noise`` is the sd of added Gaussian pixel noise.
    """
    check_choice("shape", shape, SHAPES)
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise!r}")
    cy, cx = 7.5 + rng.uniform(-2, 2, 2)
    m = _mask(shape, cy, cx, rng.uniform(4.5, 6.5))
    img = 0.15 + m * (0.85 * _texture(texture, rng) - 0.15)
    return np.clip(img + noise * rng.standard_normal((SIZE, SIZE)), 0, 1).astype(np.float32)


@lru_cache(maxsize=1)
def _digits16() -> tuple[np.ndarray, np.ndarray]:
    from scipy.ndimage import zoom
    from sklearn.datasets import load_digits

    d = load_digits()
    imgs = np.stack([zoom(im / 16.0, 2, order=1) for im in d.images]).astype(np.float32)
    return np.clip(imgs, 0, 1), d.target.astype(np.int64)


def _digit_images(rng, n, noise, rotate):
    from scipy.ndimage import rotate as rot

    imgs, labels = _digits16()
    idx = rng.integers(0, len(labels), n)
    out = imgs[idx].copy()
    if rotate:
        for k in range(n):
            out[k] = rot(out[k], rng.uniform(-rotate, rotate), reshape=False, order=1)
    out = np.clip(out + noise * rng.standard_normal(out.shape), 0, 1).astype(np.float32)
    return out, labels[idx]


def _blobs(rng, count):
    img = np.full((SIZE, SIZE), 0.1, np.float32)
    for _ in range(count):
        cy, cx = rng.uniform(2, 13, 2)
        img += 0.8 * np.exp(-((_yy - cy) ** 2 + (_xx - cx) ** 2) / (2 * 1.1 ** 2))
    return img


def _clutter(rng, img):
    for _ in range(2):
        if rng.random() < 0.5:
            img[rng.integers(0, SIZE), :] += 0.35
        else:
            img[:, rng.integers(0, SIZE)] += 0.35
    return img


def make_task(task: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` images and labels of a source task (S1-S4) or a target task (see ``TARGETS``), from ``seed``.

    Explained in chapters/transferability-benchmarks/02_experiments.md.
    """
    check_choice("task", task, tuple(SOURCES) + tuple(TARGETS))
    n = check_int("n", n)
    seed = check_int("seed", seed, low=0)
    rng = np.random.default_rng([seed, sum(map(ord, task))])
    if task == "S4":
        return _digit_images(rng, n, 0.05, rotate=30)
    if task in ("digits", "digits-noisy"):
        return _digit_images(rng, n, 0.05 if task == "digits" else 0.35, rotate=0)
    X = np.empty((n, SIZE, SIZE), np.float32)
    y = np.empty(n, np.int64)
    for k in range(n):
        s, f, a = rng.integers(0, 4), rng.integers(0, 4), rng.integers(0, 4)
        if task == "S1":          # 4 shapes x 4 frequencies x 2 orientations (0 or 90 degrees)
            a2 = 2 * (a % 2)
            X[k], y[k] = draw(SHAPES[s], (FREQS[f], ANGLES[a2]), rng), s * 8 + f * 2 + a % 2
        elif task == "S2":
            X[k], y[k] = draw(SHAPES[s], (FREQS[f], ANGLES[a]), rng), s
        elif task == "S3":
            X[k], y[k] = draw(SHAPES[s], (FREQS[f], ANGLES[a]), rng), f * 4 + a
        elif task == "shape-new-texture":
            X[k], y[k] = draw(SHAPES[s], ("dots", "checker")[k % 2], rng), s
        elif task == "frequency":
            X[k] = np.clip(_stripes(FREQS[f], rng.uniform(0, 180), rng.uniform(0, 6.3))
                           + 0.15 * rng.standard_normal((SIZE, SIZE)), 0, 1)
            y[k] = f
        elif task == "orientation":
            X[k], y[k] = draw(SHAPES[s], (rng.uniform(1.5, 4.5), ANGLES[a]), rng), a
        elif task == "blob-count":
            X[k] = np.clip(_blobs(rng, f + 1) + 0.08 * rng.standard_normal((SIZE, SIZE)), 0, 1)
            y[k] = f
        elif task == "shape-clutter":
            X[k] = np.clip(_clutter(rng, draw(SHAPES[s], (FREQS[f], ANGLES[a]), rng, noise=0.15)), 0, 1)
            y[k] = s
        else:                     # cue-conflict: the stripes of shape (s + 1) mod 4's S1 classes
            X[k], y[k] = draw(SHAPES[s], (FREQS[(s + 1) % 4], ANGLES[2 * ((s + 1) % 2)]), rng), s
    return X, y


@lru_cache(maxsize=16)
def _make_task_cached(task: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    X, y = make_task(task, n, seed)
    X.flags.writeable = y.flags.writeable = False     # shared between callers: nobody may change it
    return X, y


def task_copy(task: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``make_task(task, n, seed)``, generated once per process and handed out as fresh copies.

    The images depend only on (task, n, seed), so the two zoos of one seed, which share the source task S1 and all
    eight target tasks, need not draw them twice. Explained in chapters/transferability-benchmarks/02_experiments.md.
    """
    X, y = _make_task_cached(task, n, seed)
    return X.copy(), y.copy()
