"""A simulated cortex over scikit-learn's digits: images, ROIs, parcels, voxels, with known roles.

Explained in chapters/neuroadapter/02_experiments.md. The 8×8 digits are upsampled to 16×16, scaled to [-1, 1] and
shifted by up to ``max_shift`` pixels (zero fill), so position varies from image to image. A voxel's response is a
fixed function of the image plus Gaussian noise whose size depends on its ROI, ``y = f_ROI(x)ᵀ w + ε`` (no
haemodynamics). The ROIs, each a set of parcels of ``VOXELS`` voxels:

- ``V1``: 16 parcels on a 4×4 grid of receptive fields; a voxel is a random linear filter (simple-cell-like) under a
  Gaussian envelope of sd 1 px centred on its parcel's RF centre, so each parcel sees one 4×4 patch;
- ``V4``: 4 parcels, one per quadrant; a voxel pools oriented gradient energy (4 orientations) under a Gaussian
  envelope of sd 3 px: coarse position, no polarity;
- ``category``: 4 parcels; a voxel is a random code of the digit class (one-hot) plus a little stroke energy;
- ``global``: 2 parcels; a voxel is a random projection of the 4×4 block-mean of the image (broad layout);
- ``noise``: 4 parcels of pure noise, the negative control.

Every voxel's signal is standardised over the training images before its noise is added, so ``NOISE[roi]`` is the
noise sd in units of the signal's sd.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..common.checks import check_int, check_non_negative

__all__ = ["ROIS", "PARCELS", "VOXELS", "NOISE", "IMAGE", "Stimuli", "Cortex", "digit_stimuli", "upsample"]

#: ROI names in token order.
ROIS = ("V1", "V4", "category", "global", "noise")
#: Parcels per ROI.
PARCELS = {"V1": 16, "V4": 4, "category": 4, "global": 2, "noise": 4}
#: Voxels per parcel.
VOXELS = 24
#: Noise sd per ROI in units of the standardised signal (fixed on development seed 100).
NOISE = {"V1": 3.0, "V4": 1.5, "category": 0.5, "global": 1.5, "noise": 1.0}
#: Image side in pixels.
IMAGE = 16


def upsample(images8: np.ndarray) -> np.ndarray:
    """Bilinear 8×8 → 16×16 upsampling (half-pixel centres, edge clamp) of ``(n, 8, 8)`` images.

    Explained in chapters/neuroadapter/02_experiments.md.
    """
    a = np.asarray(images8, dtype=np.float64)
    if a.ndim != 3 or a.shape[1:] != (8, 8):
        raise ValueError(f"images8 must have shape (n, 8, 8); got {a.shape}")
    src = (np.arange(IMAGE) + 0.5) / 2 - 0.5
    i0 = np.clip(np.floor(src).astype(int), 0, 7)
    i1 = np.clip(i0 + 1, 0, 7)
    w = np.clip(src - i0, 0, 1)
    rows = a[:, i0, :] * (1 - w)[None, :, None] + a[:, i1, :] * w[None, :, None]
    return rows[:, :, i0] * (1 - w)[None, None, :] + rows[:, :, i1] * w[None, None, :]


def _shift(img: np.ndarray, dy: int, dx: int) -> np.ndarray:
    out = np.full_like(img, -1.0)
    h = img.shape[-1]
    ys, yd = (slice(0, h - dy), slice(dy, h)) if dy >= 0 else (slice(-dy, h), slice(0, h + dy))
    xs, xd = (slice(0, h - dx), slice(dx, h)) if dx >= 0 else (slice(-dx, h), slice(0, h + dx))
    out[yd, xd] = img[ys, xs]
    return out


@dataclass(frozen=True)
class Stimuli:
    """Images ``x`` (n, 16, 16) in [-1, 1], labels ``y`` (n,), the index ``base`` of the digit each came from.

    Explained in chapters/neuroadapter/02_experiments.md.
    """

    x: np.ndarray
    y: np.ndarray
    base: np.ndarray

    def __len__(self) -> int:
        return len(self.y)

    def subset(self, idx) -> "Stimuli":
        """The stimuli at ``idx``. Explained in chapters/neuroadapter/02_experiments.md."""
        return Stimuli(self.x[idx], self.y[idx], self.base[idx])


def digit_stimuli(split: str, seed: int, shifts: int = 5, max_shift: int = 2, n_test_base: int = 597) -> Stimuli:
    """The digits of one split, upsampled and shifted: ``"train"`` keeps ``shifts`` random shifts of each of its
    1200 base digits, ``"test"`` one shift of each of the other 597 (``n_test_base`` of them, in a fixed order).

    Explained in chapters/neuroadapter/02_experiments.md. The split of the 1797 digits is fixed (seed 0); the shifts
    depend on ``seed``.
    """
    from sklearn.datasets import load_digits

    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test'; got {split!r}")
    seed = check_int("seed", seed, low=0)
    shifts, max_shift = check_int("shifts", shifts), check_int("max_shift", max_shift, low=0)
    n_test_base = check_int("n_test_base", n_test_base)
    d = load_digits()
    order = np.random.default_rng(0).permutation(len(d.target))
    base = order[:1200] if split == "train" else order[1200:1200 + min(n_test_base, 597)]
    imgs = upsample(d.images[base] / 16.0) * 2 - 1
    reps = shifts if split == "train" else 1
    rng = np.random.default_rng(seed * 7919 + (0 if split == "train" else 1))
    xs, ys, bs = [], [], []
    for _ in range(reps):
        dy, dx = rng.integers(-max_shift, max_shift + 1, (2, len(base)))
        xs.append(np.stack([_shift(im, a, b) for im, a, b in zip(imgs, dy, dx)]))
        ys.append(d.target[base])
        bs.append(base)
    return Stimuli(np.concatenate(xs).astype(np.float32), np.concatenate(ys), np.concatenate(bs))


def _grid():
    yy, xx = np.mgrid[0:IMAGE, 0:IMAGE].astype(float)
    return yy, xx


def _envelope(cy: float, cx: float, sd: float) -> np.ndarray:
    yy, xx = _grid()
    return np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * sd ** 2))


def _energy(x: np.ndarray) -> np.ndarray:
    """Oriented gradient energy (n, 4, 16, 16) at 0, 45, 90, 135 degrees."""
    gy, gx = np.gradient(x, axis=(1, 2))
    return np.stack([(np.cos(t) * gx + np.sin(t) * gy) ** 2 for t in np.arange(4) * np.pi / 4], 1)


@dataclass
class Cortex:
    """The simulated cortex of one seed: fixed voxel weights, per-ROI noise, voxel standardisation.

    Explained in chapters/neuroadapter/02_experiments.md. ``rf_centres`` gives the (row, column) RF centre in
    pixels of every parcel of V1 and V4; ``roi_of`` the ROI of every parcel (token order).
    """

    seed: int
    noise: dict = field(default_factory=lambda: dict(NOISE))

    def __post_init__(self):
        self.seed = check_int("seed", self.seed, low=0)
        for k in ROIS:
            check_non_negative(f"noise[{k!r}]", self.noise.get(k, -1.0))
        rng = np.random.default_rng(10_000 + self.seed)
        self.roi_of = [r for r in ROIS for _ in range(PARCELS[r])]
        v1 = [(4 * a + 1.5, 4 * b + 1.5) for a in range(4) for b in range(4)]
        v4 = [(8 * a + 3.5, 8 * b + 3.5) for a in range(2) for b in range(2)]
        self.rf_centres = {"V1": np.array(v1), "V4": np.array(v4)}
        self.w_v1 = np.stack([rng.normal(0, 1, (VOXELS, IMAGE, IMAGE)) * _envelope(cy, cx, 1.0)
                              for cy, cx in v1])                                 # (16, V, 16, 16)
        self.w_v4 = np.stack([np.abs(rng.normal(0, 1, (VOXELS, 4, 1, 1))) * _envelope(cy, cx, 3.0)
                              for cy, cx in v4])                                 # (4, V, 4, 16, 16)
        self.w_cat = rng.normal(0, 1, (PARCELS["category"], VOXELS, 10))
        self.w_stroke = rng.normal(0, 0.3, (PARCELS["category"], VOXELS, 4))
        self.w_glob = rng.normal(0, 1, (PARCELS["global"], VOXELS, 16))
        self.mean = self.sd = None

    @property
    def n_parcels(self) -> int:
        """The number of parcels (tokens). Explained in chapters/neuroadapter/02_experiments.md."""
        return len(self.roi_of)

    def parcels(self, roi: str) -> np.ndarray:
        """Token indices of ``roi``'s parcels. Explained in chapters/neuroadapter/02_experiments.md."""
        if roi not in ROIS:
            raise ValueError(f"roi must be one of {', '.join(ROIS)}; got {roi!r}")
        return np.array([i for i, r in enumerate(self.roi_of) if r == roi])

    def signal(self, stim: Stimuli) -> np.ndarray:
        """Noise-free responses (n, parcels, VOXELS) before standardisation.

        Explained in chapters/neuroadapter/02_experiments.md.
        """
        if not isinstance(stim, Stimuli):
            raise ValueError(f"stim must be a Stimuli; got {type(stim).__name__}")
        x = stim.x.astype(np.float64)
        n = len(x)
        v1 = np.einsum("nij,pvij->npv", x, self.w_v1)
        v4 = np.einsum("ncij,pvcij->npv", _energy(x), self.w_v4)
        onehot = np.eye(10)[stim.y]
        e = _energy(x)
        strokes = e.reshape(n, 4, 2, 8, 2, 8).mean((3, 5)).reshape(n, 4, 4).mean(1)   # energy per quadrant
        cat = np.einsum("nk,pvk->npv", onehot, self.w_cat) + np.einsum("nk,pvk->npv", strokes, self.w_stroke)
        layout = x.reshape(n, 4, 4, 4, 4).mean((2, 4)).reshape(n, 16)
        glob = np.einsum("nk,pvk->npv", layout, self.w_glob)
        noise = np.zeros((n, PARCELS["noise"], VOXELS))
        return np.concatenate([v1, v4, cat, glob, noise], 1)

    def fit(self, stim: Stimuli) -> "Cortex":
        """Fix each voxel's signal mean and sd on the training images. Explained in
        chapters/neuroadapter/02_experiments.md.
        """
        s = self.signal(stim)
        self.mean, self.sd = s.mean(0), np.maximum(s.std(0), 1e-8)
        return self

    def respond(self, stim: Stimuli, seed: int) -> np.ndarray:
        """Voxel responses (n, parcels, VOXELS) float32: standardised signal plus ROI noise drawn with ``seed``.

        Explained in chapters/neuroadapter/02_experiments.md.
        """
        if self.mean is None:
            raise ValueError("call fit(training stimuli) before respond()")
        rng = np.random.default_rng(check_int("seed", seed, low=0))
        z = (self.signal(stim) - self.mean) / self.sd
        sd = np.array([self.noise[r] for r in self.roi_of])[None, :, None]
        noise_roi = np.array([r == "noise" for r in self.roi_of])
        z[:, noise_roi] = 0.0
        return (z + rng.normal(0, 1, z.shape) * sd).astype(np.float32)
