"""A toy behaviour atlas with known latents: nine synthetic datasets rendered from valence, arousal, a depressive
trait and an incongruity flag into text, audio and visual feature vectors.

Explained in chapters/behavior-atlas/02_experiments.md. Every clip draws valence v and arousal a (standard normal),
a depressive trait d = rho (-v - a)/sqrt(2) + sqrt(1 - rho^2) u and, in the humour and sarcasm sets, an incongruity
flag h that flips the valence the words carry (v_text = -v). Each modality is a fixed random "sensor": text sees
(v_text, two topic dimensions), audio sees (a, d, v/2), visual sees (v, a), each through tanh of a random projection
to `FEATURES` dimensions. Each dataset adds its own offset, gain and noise, keeps its own modalities and drops some
at random. With `shared=False` (the negative control) each dataset has its own sensors and rho = 0: the same
feature means something different in every dataset and no latent is shared.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from repro.common import check_between, check_int

from .labels import DOMAINS, build_label_map

MODALITIES = ("text", "audio", "visual")
#: Width of each modality's feature vector.
FEATURES = 24
#: Width of the audio descriptor (the paper's OpenSMILE-like ext_audio_feats): pitch variance, energy.
DESCRIPTOR = 2
_LATENT = {"text": 3, "audio": 3, "visual": 2}


@dataclass(frozen=True)
class DatasetSpec:
    """One synthetic dataset: its task, label domain and words, modalities, sizes and noise
    (chapters/behavior-atlas/02_experiments.md)."""

    name: str
    task: str
    domain: str
    words: tuple
    modalities: tuple
    n_train: int
    noise: float
    p_incongruent: float = 0.0
    held_out: bool = False


SPECS: tuple = (
    DatasetSpec("emo-a", "EMO", "emotion", ("sadness", "neutral", "calm", "joy", "surprise", "anger"),
                ("audio",), 2000, 0.8),
    DatasetSpec("emo-b", "EMO", "emotion", ("happiness", "angry", "sad", "relaxed"),
                ("text", "audio", "visual"), 1000, 0.9),
    DatasetSpec("sen-b", "SEN", "sentiment", ("neg", "neu", "pos"), ("text", "visual"), 1000, 0.9),
    DatasetSpec("sen-c", "SEN", "sentiment", ("-3", "-2", "-1", "0", "1", "2", "3"),
                ("text", "audio", "visual"), 1500, 0.8),
    DatasetSpec("dep-c", "DEP", "depression", ("no", "yes"), ("text", "audio"), 200, 1.0),
    DatasetSpec("anx-f", "ANX", "anxiety", ("not anxious", "anxious"), ("audio", "visual"), 1000, 0.9),
    DatasetSpec("ptsd-g", "PTSD", "ptsd", ("no ptsd", "ptsd"), ("text", "audio"), 1500, 0.9),
    DatasetSpec("hum-d", "HUM", "humour", ("not humorous", "humorous"), ("text", "audio", "visual"), 1000, 0.8,
                p_incongruent=0.5),
    DatasetSpec("sar-e", "SAR", "sarcasm", ("not sarcastic", "sarcastic"), ("text", "audio", "visual"), 400, 0.8,
                p_incongruent=0.5, held_out=True),
)
SPEC = {s.name: s for s in SPECS}
#: The datasets of the multi-task training mixture (the held-out sarcasm set is not among them).
TRAIN_SETS = tuple(s.name for s in SPECS if not s.held_out)
VOCABULARIES = {s.name: (s.domain, list(s.words)) for s in SPECS}
LABEL_MAP = build_label_map(VOCABULARIES)


@dataclass
class Split:
    """One split of one dataset: features `x` (n, 3, FEATURES), modality mask (n, 3), audio descriptor (n,
    DESCRIPTOR) and its mask (n,), labels `y` (local index) and the true latents (chapters/behavior-atlas/)."""

    x: np.ndarray
    mask: np.ndarray
    desc: np.ndarray
    desc_mask: np.ndarray
    y: np.ndarray
    latents: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.y)


def _labels(spec: DatasetSpec, z: dict, rng) -> np.ndarray:
    v, a, d, h = z["v"], z["a"], z["d"], z["h"]
    e = rng.normal(0, 0.2, len(v))
    if spec.task == "EMO" and len(spec.words) == 6:
        return np.floor((np.arctan2(a + e, v - e) + np.pi) / (np.pi / 3)).astype(int).clip(0, 5)
    if spec.task == "EMO":
        return np.select([(v + e >= 0) & (a >= 0), (v + e < 0) & (a >= 0), (v + e < 0) & (a < 0)], [0, 1, 2], 3)
    if spec.task == "SEN" and len(spec.words) == 3:
        return np.digitize(v + e, [-0.5, 0.5])
    if spec.task == "SEN":
        return np.digitize(v + e, [-1.5, -0.9, -0.3, 0.3, 0.9, 1.5])
    if spec.task == "DEP":
        return (d + e > 0.6).astype(int)
    if spec.task == "ANX":
        return ((a - 0.6 * v) / np.sqrt(1.36) + e > 0.7).astype(int)
    if spec.task == "PTSD":
        return ((d + 0.3 * a) / np.sqrt(1.09) + e > 0.6).astype(int)
    if spec.task == "HUM":
        return h.astype(int)
    if spec.task == "SAR":
        return h.astype(int)
    raise ValueError(f"spec.task {spec.task!r} has no labelling rule")


def sample_latents(n: int, rng, rho: float = 0.8, p_incongruent: float = 0.0, sarcastic: bool = False) -> dict:
    """The latents of `n` clips: v, a, u, d, h, v_text and two topic dimensions; with `sarcastic`, an incongruent
    clip has a negative face under positive words, v = -|v| (chapters/behavior-atlas/02_experiments.md)."""
    n = check_int("n", n)
    check_between("rho", rho, 0.0, 1.0, closed="both")
    check_between("p_incongruent", p_incongruent, 0.0, 1.0, closed="both")
    v, a, u = rng.normal(size=(3, n))
    h = (rng.random(n) < p_incongruent).astype(int)
    if sarcastic:
        v = np.where(h == 1, -np.abs(v), v)
    d = rho * (-v - a) / np.sqrt(2) + np.sqrt(1 - rho ** 2) * u
    topic = rng.normal(size=(n, 2))
    return {"v": v, "a": a, "u": u, "d": d, "h": h, "v_text": v * (1 - 2 * h), "topic": topic}


def modality_latents(z: dict) -> dict:
    """What each sensor sees: text (v_text, topic), audio (a, d, v/2), visual (v, a)
    (chapters/behavior-atlas/02_experiments.md)."""
    return {"text": np.column_stack([z["v_text"], z["topic"]]),
            "audio": np.column_stack([z["a"], z["d"], 0.5 * z["v"]]),
            "visual": np.column_stack([z["v"], z["a"]])}


def make_sensors(rng) -> dict:
    """One random sensor per modality: {modality: (W, b)} with W of shape (latent width, FEATURES)
    (chapters/behavior-atlas/02_experiments.md)."""
    return {m: (rng.normal(0, 2.0, (k, FEATURES)), rng.normal(0, 0.5, FEATURES)) for m, k in _LATENT.items()}


@dataclass
class Atlas:
    """The toy atlas: {dataset: {"train": Split, "test": Split}}, the world it came from and the label map
    (chapters/behavior-atlas/02_experiments.md)."""

    splits: dict
    shared: bool
    seed: int
    label_map: dict = field(default_factory=lambda: LABEL_MAP)

    def __getitem__(self, name: str) -> dict:
        return self.splits[name]


def render_split(spec: DatasetSpec, n: int, rng, sensors: dict, nuisance: dict, rho: float,
                 p_missing: float = 0.15) -> Split:
    """Draw `n` clips of dataset `spec` and render them through `sensors` with the dataset's `nuisance`
    {modality: (offset, gain)} (chapters/behavior-atlas/02_experiments.md)."""
    n = check_int("n", n)
    check_between("p_missing", p_missing, 0.0, 1.0, closed="left")
    z = sample_latents(n, rng, rho=rho, p_incongruent=spec.p_incongruent, sarcastic=spec.task == "SAR")
    lat = modality_latents(z)
    x = np.zeros((n, len(MODALITIES), FEATURES), np.float32)
    mask = np.zeros((n, len(MODALITIES)), np.float32)
    for k, m in enumerate(MODALITIES):
        if m not in spec.modalities:
            continue
        W, b = sensors[m]
        offset, gain = nuisance[m]
        x[:, k] = gain * np.tanh(lat[m] @ W + b) + offset + rng.normal(0, spec.noise, (n, FEATURES))
        mask[:, k] = 1.0
    if len(spec.modalities) > 1:                          # drop a modality at random, never all of them
        present = np.flatnonzero([m in spec.modalities for m in MODALITIES])
        drop = rng.random(n) < p_missing
        which = present[rng.integers(0, len(present), n)]
        mask[np.flatnonzero(drop), which[drop]] = 0.0
        x *= mask[:, :, None]
    has_audio = mask[:, MODALITIES.index("audio")]
    desc = np.column_stack([z["a"], (z["a"] + z["d"]) / np.sqrt(2)]) + rng.normal(0, 0.15, (n, DESCRIPTOR))
    desc = (desc * has_audio[:, None]).astype(np.float32)
    y = _labels(spec, z, rng)
    return Split(x=x, mask=mask, desc=desc, desc_mask=has_audio.astype(np.float32), y=y,
                 latents={k: z[k] for k in ("v", "a", "d", "h", "v_text")})


def make_atlas(seed: int, shared: bool = True, n_test: int = 500, scale_train: float = 1.0,
               rho: float = 0.8) -> Atlas:
    """Every dataset of `SPECS`, train and test, from one world: shared sensors and rho (shared=True) or, for the
    negative control, sensors of its own for each dataset and rho = 0 (chapters/behavior-atlas/02_experiments.md).
    `scale_train` multiplies each training size except the 200-clip depression set and the sarcasm pool."""
    seed = check_int("seed", seed, low=0)
    n_test = check_int("n_test", n_test)
    if not isinstance(scale_train, (int, float)) or scale_train <= 0:
        raise ValueError(f"scale_train must be a positive number, got {scale_train!r}")
    rng = np.random.default_rng([seed, int(shared)])
    world = make_sensors(np.random.default_rng([seed, 7]))
    splits = {}
    for spec in SPECS:
        sensors = world if shared else make_sensors(rng)
        nuisance = {m: (rng.normal(0, 0.3, FEATURES), rng.uniform(0.8, 1.2)) for m in MODALITIES}
        n_train = spec.n_train if spec.name in ("dep-c", "sar-e") else int(round(spec.n_train * scale_train))
        r = rho if shared else 0.0
        splits[spec.name] = {"train": render_split(spec, n_train, rng, sensors, nuisance, r),
                             "test": render_split(spec, n_test if spec.name != "sar-e" else 2 * n_test, rng,
                                                  sensors, nuisance, r)}
    return Atlas(splits=splits, shared=shared, seed=seed)


def n_classes(name: str) -> int:
    """The number of label words of dataset `name` (chapters/behavior-atlas/02_experiments.md)."""
    if name not in SPEC:
        raise ValueError(f"name must be one of {list(SPEC)}, got {name!r}")
    return len(SPEC[name].words)


def global_labels(name: str, y) -> np.ndarray:
    """Local label indices of dataset `name` as global indices (chapters/behavior-atlas/01_unification.md)."""
    if name not in SPEC:
        raise ValueError(f"name must be one of {list(SPEC)}, got {name!r}")
    words = SPEC[name].words
    return np.array([LABEL_MAP[name][words[i]] for i in np.asarray(y)], int)


N_GLOBAL = sum(len(c) for c in DOMAINS.values())
