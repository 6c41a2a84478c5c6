"""Filter responses, object terminals and scene terminals: the r_j of the log-linear model, from pixels.

Explained in chapters/and-or-templates/02_experiments.md ("Object templates" and "Scene terminals"). Seven filters
(bright ridges at four orientations from the Gaussian Hessian, two scale-normalised blob detectors, smoothed ink)
are squashed to [0, 1]. An object terminal is one filter, max-pooled over a 5 x 5 part cell at one of 5 x 5 offsets from the
object's centre (the MAX of SUM-MAX: a local shift). A scene terminal is an object class in a lattice cell (the best
detection near the cell centre, weighted by a Gaussian of the distance) or a line in a row or a column.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage
from scipy.special import expit

from .canvas import GRID, OBJECTS, SIZE, cell_centre

FILTERS = ("ridge 0°", "ridge 45°", "ridge 90°", "ridge 135°", "blob small", "blob large", "fill")
PART = 5                                  # side of a part cell, pixels
OFFSETS = (-2 * PART, -PART, 0, PART, 2 * PART)
PAD = 2 * PART
OBJECT_TERMINALS = [(f, dy, dx) for f in range(len(FILTERS)) for dy in OFFSETS for dx in OFFSETS]


def _check_images(images) -> np.ndarray:
    images = np.asarray(images, dtype=np.float32)
    if images.ndim != 3 or images.shape[1:] != (SIZE, SIZE):
        raise ValueError(f"images must be (N, {SIZE}, {SIZE}), got shape {images.shape}")
    return images


def raw_filters(images) -> np.ndarray:
    """(N, 7, H, W) rectified responses: -d2/dn2 of the Gaussian-smoothed image across lines at 0, 45, 90 and 135
    degrees (sigma 1), -sigma^2 LoG at sigma 1.2 and 2.5, and the image smoothed at sigma 2 (ink nearby) (chapters/and-or-templates/02_experiments.md)."""
    images = _check_images(images)
    g = lambda order, s=1.0: ndimage.gaussian_filter(images, sigma=(0, s, s), order=order, mode="nearest")
    iyy, ixx, ixy = g((0, 2, 0)), g((0, 0, 2)), g((0, 1, 1))
    maps = [-iyy, -(iyy + 2 * ixy + ixx) / 2, -ixx, -(iyy - 2 * ixy + ixx) / 2]
    for s in (1.2, 2.5):
        maps.append(-s ** 2 * ndimage.gaussian_laplace(images, sigma=(0, s, s), mode="nearest"))
    maps.append(g((0, 0, 0), 2.0))                                      # how much ink is near: filled shapes
    return np.maximum(np.stack(maps, axis=1), 0)


@dataclass
class FilterBank:
    """The seven filters with their squashing scales, r = 1 - exp(-response / scale); `scales` come from `fit`
    (half the 99.5th percentile of each filter's response on calibration images)
    (chapters/and-or-templates/02_experiments.md)."""

    scales: np.ndarray

    @classmethod
    def fit(cls, images) -> "FilterBank":
        return cls.fit_raw(raw_filters(images))

    @classmethod
    def fit_raw(cls, raw) -> "FilterBank":
        """`fit` from the `raw_filters` of the calibration images, when the caller needs them again."""
        return cls(0.5 * np.percentile(raw, 99.5, axis=(0, 2, 3)) + 1e-6)

    def responses(self, images) -> np.ndarray:
        """(N, 7, H, W) responses in [0, 1]."""
        return self.squash(raw_filters(images))

    def squash(self, raw) -> np.ndarray:
        """Responses in [0, 1] from `raw_filters` output."""
        return (1 - np.exp(-raw / self.scales[None, :, None, None])).astype(np.float32)

    def pooled(self, images) -> np.ndarray:
        """Responses max-pooled over PART x PART windows, padded by PART with zeros, (N, 7, H+2P, W+2P)."""
        return self.pooled_raw(raw_filters(images))

    def pooled_raw(self, raw) -> np.ndarray:
        """`pooled` from `raw_filters` output."""
        pooled = ndimage.maximum_filter(self.squash(raw), size=(1, 1, PART, PART), mode="constant")
        return np.pad(pooled, ((0, 0), (0, 0), (PAD, PAD), (PAD, PAD)))


def object_features(pooled, centres) -> np.ndarray:
    """(N, 54) object-terminal responses of image n at its centre `centres[n]` (chapters/and-or-templates/02_experiments.md)."""
    centres = np.asarray(centres, dtype=int)
    if centres.shape != (pooled.shape[0], 2):
        raise ValueError(f"centres must be (N, 2) with N = {pooled.shape[0]} images, got {centres.shape}")
    n = np.arange(pooled.shape[0])
    return np.stack([pooled[n, f, centres[:, 0] + PAD + dy, centres[:, 1] + PAD + dx]
                     for f, dy, dx in OBJECT_TERMINALS], axis=1)


def detection_map(pooled, cols, beta, logz) -> np.ndarray:
    """(N, H, W) log-likelihood ratio of an object template centred at every pixel:
    sum over its terminals of beta_j r_j(p + offset_j) - log z_j (chapters/and-or-templates/02_experiments.md)."""
    out = np.zeros((pooled.shape[0], SIZE, SIZE), dtype=np.float32)
    for j, b, lz in zip(cols, beta, logz):
        f, dy, dx = OBJECT_TERMINALS[j]
        out += b * pooled[:, f, PAD + dy:PAD + dy + SIZE, PAD + dx:PAD + dx + SIZE] - lz
    return out


def _gauss(sigma: float) -> np.ndarray:
    centres = np.array([cell_centre(c) for c in range(GRID)])
    return np.exp(-(np.arange(SIZE)[None, :] - centres[:, None]) ** 2 / (2 * sigma ** 2)).astype(np.float32)


def cell_max(presence, sigma: float) -> np.ndarray:
    """(N, GRID, GRID): max over pixels p of presence(p) g(p_y - c_y) g(p_x - c_x), Gaussian g of width `sigma`,
    done separably (chapters/and-or-templates/02_experiments.md)."""
    g = _gauss(sigma)
    a = (presence[:, :, None, :] * g[None, None, :, :]).max(-1)          # (N, H, GRID_x)
    return (a[:, None, :, :] * g[None, :, :, None]).max(2)              # (N, GRID_y, GRID_x)


def scene_features(images, bank: FilterBank, object_templates, sigma: float = 4.0, prior: float = 5.0,
                   chunk: int = 256) -> np.ndarray:
    """(N, 161) scene-terminal responses in [0, 1] (order of canvas.TERMINALS). For each object class the presence
    map is sigmoid(detection log-ratio - prior), `prior` the log prior odds against an object centred at a given
    pixel, kept only where that class wins against the others (local mutual
    exclusivity between object templates) and weighted by one minus the line evidence along the object's long
    axis (a person or a tree on a vertical line, a mountain on a horizontal one, is explained away); lines use the row and column means of the 0° and 90° ridges
    (chapters/and-or-templates/02_experiments.md)."""
    images = _check_images(images)
    if len(object_templates) != len(OBJECTS):
        raise ValueError(f"object_templates must hold one template per class {OBJECTS}, got {len(object_templates)}")
    out = []
    for s in range(0, len(images), chunk):
        batch = images[s:s + chunk]
        pooled = bank.pooled(batch)
        scores = np.stack([detection_map(pooled, t.cols, t.beta, t.logz) for t in object_templates], 1)
        win = scores.argmax(1)
        resp = pooled[:, :, PAD:PAD + SIZE, PAD:PAD + SIZE]
        rows = resp[:, 0].mean(2)                                       # (N, H): horizontal ridge per row
        cols = resp[:, 2].mean(1)                                       # (N, W): vertical ridge per column
        feats = []
        for k, kind in enumerate(OBJECTS):
            presence = expit(scores[:, k] - prior) * (win == k)
            # explaining away: an upright object on a vertical line, or a mountain on a horizontal one, is the line
            presence *= 1 - (rows[:, :, None] if kind == "mountain" else cols[:, None, :])
            feats.append(cell_max(presence, sigma).reshape(len(batch), -1))
        g = _gauss(sigma / 2)
        feats.append((rows[:, None, :] * g[None]).max(-1))
        feats.append((cols[:, None, :] * g[None]).max(-1))
        out.append(np.concatenate(feats, axis=1))
    return np.clip(np.concatenate(out), 0, 1).astype(np.float64)


