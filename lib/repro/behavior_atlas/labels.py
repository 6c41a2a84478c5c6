"""The global label space: domains, global classes, per-dataset vocabularies and their synonyms.

Explained in chapters/behavior-atlas/01_unification.md. Like the paper's unified label map (25 global classes in 7
domains, as the research brief reads it from the authors' repository), each dataset's own label strings are mapped
to one global index; synonyms ("joy" and "happy", "anger" and "angry") share it.
"""
from __future__ import annotations

#: Domains and their global classes, in order; a class's global index is its position in `GLOBAL_CLASSES`.
DOMAINS: dict[str, list[str]] = {
    "sentiment": ["strongly negative", "negative", "weakly negative", "neutral", "weakly positive", "positive",
                  "strongly positive"],
    "emotion": ["neutral", "calm", "happy", "sad", "angry", "fearful", "disgust", "surprised"],
    "ptsd": ["no ptsd", "ptsd"],
    "depression": ["not depressed", "depressed"],
    "anxiety": ["not anxious", "anxious"],
    "sarcasm": ["not sarcastic", "sarcastic"],
    "humour": ["not humorous", "humorous"],
}
#: (domain, class) of every global index.
GLOBAL_CLASSES: list[tuple[str, str]] = [(d, c) for d, cs in DOMAINS.items() for c in cs]
#: Synonyms: a dataset's own word -> the global class name it means (within the dataset's domain).
SYNONYMS: dict[str, str] = {"joy": "happy", "happiness": "happy", "anger": "angry", "sadness": "sad",
                            "fear": "fearful", "surprise": "surprised", "relaxed": "calm", "neg": "negative",
                            "pos": "positive", "neu": "neutral", "-3": "strongly negative", "-2": "negative",
                            "-1": "weakly negative", "0": "neutral", "1": "weakly positive", "2": "positive",
                            "3": "strongly positive", "yes": None, "no": None}


def global_index(domain: str, cls: str) -> int:
    """The global index of class `cls` of `domain` (chapters/behavior-atlas/01_unification.md)."""
    if domain not in DOMAINS:
        raise ValueError(f"domain must be one of {list(DOMAINS)}, got {domain!r}")
    if cls not in DOMAINS[domain]:
        raise ValueError(f"cls {cls!r} is not a class of domain {domain!r} ({DOMAINS[domain]})")
    return GLOBAL_CLASSES.index((domain, cls))


def canonical(domain: str, word: str) -> str:
    """The global class name a dataset's label `word` means in `domain`: itself, or its synonym; a binary domain's
    "yes"/"no" are its positive/negative class (chapters/behavior-atlas/01_unification.md)."""
    if domain not in DOMAINS:
        raise ValueError(f"domain must be one of {list(DOMAINS)}, got {domain!r}")
    if not isinstance(word, str) or not word:
        raise ValueError(f"word must be a non-empty string, got {word!r}")
    if word in DOMAINS[domain]:
        return word
    if word in ("yes", "no") and len(DOMAINS[domain]) == 2:
        return DOMAINS[domain][1 if word == "yes" else 0]
    if SYNONYMS.get(word) in DOMAINS[domain]:
        return SYNONYMS[word]
    raise ValueError(f"word {word!r} has no global class in domain {domain!r}")


def build_label_map(vocabularies: dict) -> dict:
    """{dataset: {label word: global index}} from {dataset: (domain, [label words])}
    (chapters/behavior-atlas/01_unification.md). Raises ValueError for a word with no global class."""
    if not isinstance(vocabularies, dict) or not vocabularies:
        raise ValueError("vocabularies must be a non-empty dict {dataset: (domain, [words])}")
    out = {}
    for name, spec in vocabularies.items():
        if not (isinstance(spec, tuple) and len(spec) == 2):
            raise ValueError(f"vocabularies[{name!r}] must be (domain, [words]), got {spec!r}")
        domain, words = spec
        if len(set(words)) != len(words):
            raise ValueError(f"vocabularies[{name!r}] repeats a label word: {words}")
        out[name] = {w: global_index(domain, canonical(domain, w)) for w in words}
    return out


def label_map_violations(label_map: dict, vocabularies: dict) -> list[str]:
    """What is wrong with a label map, as sentences (an empty list when nothing is): a (dataset, word) without one
    global index, an index outside the dataset's domain, two words of one dataset on one index, or synonyms of
    different datasets on different indices (chapters/behavior-atlas/01_unification.md)."""
    if not isinstance(label_map, dict) or not isinstance(vocabularies, dict):
        raise ValueError("label_map and vocabularies must be dicts")
    problems, by_meaning = [], {}
    for name, (domain, words) in vocabularies.items():
        m = label_map.get(name, {})
        for w in words:
            g = m.get(w)
            if not isinstance(g, int):
                problems.append(f"{name}/{w} has no global index")
                continue
            if GLOBAL_CLASSES[g][0] != domain:
                problems.append(f"{name}/{w} -> {g} lies outside domain {domain}")
            by_meaning.setdefault((domain, canonical(domain, w)), set()).add(g)
        if len(set(m.values())) != len(m):
            problems.append(f"{name}: two words share one global index")
    problems += [f"{k} maps to {sorted(v)}" for k, v in by_meaning.items() if len(v) > 1]
    return problems
