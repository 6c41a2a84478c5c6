"""A synthetic language with ground truth at every token, after HMM-LDA (Griffiths et al. 2004).

Explained in chapters/temporal-sae/01_theory. A document has a *topic* (slow: it changes at most once, at a
sentence boundary) and every token has a *syntactic state* (fast: an HMM over DET, ADJ, NOUN, VERB, PREP, CONJ,
PUNCT with a toy grammar). Content states (ADJ, NOUN, VERB) emit a word of that part of speech from the current topic
with probability `p_topic`, otherwise from another topic; function states emit function words shared by all topics.

    corpus = make_corpus(n_docs=200, seed=0)
    corpus.tokens        # (n_docs, doc_len) int64 word ids
    corpus.topic         # (n_docs, doc_len) the latent topic at each token (ground truth "semantics")
    corpus.state         # (n_docs, doc_len) the HMM state (ground truth "syntax")
    corpus.doc           # (n_docs, doc_len) the document id (ground truth "context")
    corpus.vocab.decode(corpus.tokens[0])   # the document as text
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..common import check_between, check_int

#: The syntactic states, in the order of their ids.
STATES = ("DET", "ADJ", "NOUN", "VERB", "PREP", "CONJ", "PUNCT")
DET, ADJ, NOUN, VERB, PREP, CONJ, PUNCT = range(len(STATES))
CONTENT = (ADJ, NOUN, VERB)

#: Toy grammar: P(next state | state). Sentences start with DET and end with PUNCT.
TRANSITIONS = np.array([
    #  DET   ADJ   NOUN  VERB  PREP  CONJ  PUNCT
    [0.00, 0.35, 0.65, 0.00, 0.00, 0.00, 0.00],   # DET  -> (ADJ) NOUN
    [0.00, 0.10, 0.90, 0.00, 0.00, 0.00, 0.00],   # ADJ  -> ADJ | NOUN
    [0.00, 0.00, 0.00, 0.45, 0.20, 0.10, 0.25],   # NOUN -> VERB | PREP | CONJ | end
    [0.55, 0.00, 0.00, 0.00, 0.25, 0.00, 0.20],   # VERB -> object | PREP | end
    [1.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00],   # PREP -> DET
    [1.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00],   # CONJ -> DET
    [1.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00],   # PUNCT -> DET (a new sentence)
])

FUNCTION_WORDS = {
    DET: ["the", "a", "this", "that", "every", "some"],
    PREP: ["in", "on", "with", "near", "under", "from", "over", "behind"],
    CONJ: ["and", "but", "while", "so"],
    PUNCT: [".", "!", "?"],
}

#: Eight topics, each with 14 nouns, 8 verbs and 6 adjectives (all words distinct).
TOPICS = {
    "sea": ("ship wave sailor harbor anchor whale tide shore reef captain sail fish island storm",
            "sails drifts dives floats anchors rows swims sinks", "salty blue deep calm wet coastal"),
    "forest": ("tree fox owl moss branch deer trail cabin leaf mushroom wolf log fern hunter",
               "climbs hides grows howls gathers wanders chops rustles", "green wild shady mossy dense quiet"),
    "kitchen": ("cook pan soup knife oven bread spoon plate onion butter recipe kettle sauce chef",
                "bakes stirs boils slices tastes fries peels serves", "hot fresh spicy sweet crispy tender"),
    "space": ("rocket planet star astronaut orbit moon comet galaxy satellite crater probe telescope alien station",
              "launches orbits lands glows explores spins docks beams", "distant cosmic dark lunar bright weightless"),
    "music": ("song guitar drum singer piano band melody violin concert chord choir stage rhythm composer",
              "sings plays strums hums tunes performs records dances", "loud soft catchy musical harmonic jazzy"),
    "farm": ("cow farmer barn tractor horse field hen pig harvest seed fence goat hay orchard",
             "plows milks plants feeds harvests herds waters digs", "rural muddy ripe golden dusty fertile"),
    "city": ("street taxi tower mayor bus subway market bridge crowd office traffic cafe park driver",
             "drives builds rushes shops commutes parks waits crosses", "busy urban noisy crowded modern tall"),
    "school": ("teacher student book lesson desk exam pencil class library chalk homework lab pupil essay",
               "reads writes learns teaches studies counts spells grades", "clever curious strict smart diligent academic"),
}


@dataclass(frozen=True)
class Vocabulary:
    """The words of the language and what each one is.

    `words[i]` is the string of word id i; `word_state[i]` its part of speech (an index into STATES);
    `word_topic[i]` its topic, or -1 for a function word. Content words of topic k and part of speech s are the
    contiguous ids `content_ids[k, s]` (a slice start and length per (topic, state)).
    Explained in chapters/temporal-sae/01_theory.md.
    """

    words: tuple
    word_state: np.ndarray
    word_topic: np.ndarray
    topic_names: tuple
    start: np.ndarray      # (n_topics, n_states) first word id of each (topic, content state); -1 if none
    count: np.ndarray      # (n_states,) words per topic for content states, words in total for function states

    @property
    def size(self) -> int:
        return len(self.words)

    @property
    def n_topics(self) -> int:
        return len(self.topic_names)

    def decode(self, tokens) -> str:
        """A row of word ids as text: words separated by spaces, punctuation attached."""
        out = []
        for t in np.asarray(tokens).ravel():
            w = self.words[int(t)]
            if out and self.word_state[int(t)] == PUNCT:
                out[-1] += w
            else:
                out.append(w)
        return " ".join(out)


def make_vocabulary(n_topics: int = 8) -> Vocabulary:
    """The vocabulary for the first `n_topics` topics (1 to 8): function words first, then topic words.

    Explained in chapters/temporal-sae/01_theory.md.
    """
    if not isinstance(n_topics, (int, np.integer)) or not 1 <= n_topics <= len(TOPICS):
        raise ValueError(f"n_topics must be an integer in 1..{len(TOPICS)}, got {n_topics!r}")
    words, state, topic = [], [], []
    start = -np.ones((n_topics, len(STATES)), dtype=np.int64)
    count = np.zeros(len(STATES), dtype=np.int64)
    for s, ws in FUNCTION_WORDS.items():
        start[:, s] = len(words)
        count[s] = len(ws)
        words += ws
        state += [s] * len(ws)
        topic += [-1] * len(ws)
    names = tuple(list(TOPICS)[:n_topics])
    for k, name in enumerate(names):
        for s, group in zip((NOUN, VERB, ADJ), TOPICS[name]):
            ws = group.split()
            start[k, s] = len(words)
            count[s] = len(ws)
            words += ws
            state += [s] * len(ws)
            topic += [k] * len(ws)
    return Vocabulary(tuple(words), np.array(state), np.array(topic), names, start, count)


@dataclass(frozen=True)
class Corpus:
    """Documents of the toy language and the ground truth at every token (all arrays (n_docs, doc_len)).

    Explained in chapters/temporal-sae/01_theory.md.
    """

    tokens: np.ndarray
    topic: np.ndarray          # latent topic at each token ("semantics", slow)
    state: np.ndarray          # HMM state ("syntax", fast)
    doc: np.ndarray            # document id ("context")
    emitted_topic: np.ndarray  # topic the word was drawn from; -1 for function words
    switch_at: np.ndarray      # (n_docs,) first token under the new topic, -1 if the topic never switches
    vocab: Vocabulary

    @property
    def shape(self):
        return self.tokens.shape


def _sample_states(rng, n_docs, doc_len):
    cum = np.cumsum(TRANSITIONS, axis=1)
    cum[:, -1] = 1.0
    states = np.empty((n_docs, doc_len), dtype=np.int64)
    states[:, 0] = DET
    for t in range(1, doc_len):
        u = rng.random(n_docs)
        states[:, t] = (u[:, None] > cum[states[:, t - 1]]).sum(axis=1)
    return states


def _sample_topics(rng, states, n_topics, p_switch, switch_window):
    n_docs, doc_len = states.shape
    first = rng.integers(n_topics, size=n_docs)
    second = (first + rng.integers(1, max(n_topics, 2), size=n_docs)) % n_topics
    lo, hi = switch_window
    pos = np.arange(doc_len)
    # candidate boundaries: a PUNCT token inside the window; the new topic starts on the next token
    cand = (states == PUNCT) & (pos >= lo) & (pos < hi - 1)
    n_cand = cand.sum(axis=1)
    wants = (rng.random(n_docs) < p_switch) & (n_cand > 0) & (n_topics > 1)
    pick = np.floor(rng.random(n_docs) * np.maximum(n_cand, 1)).astype(np.int64)
    rank = np.cumsum(cand, axis=1) - 1
    chosen = np.argmax(cand & (rank == pick[:, None]), axis=1)
    switch_at = np.where(wants, chosen + 1, -1)
    after = wants[:, None] & (pos[None, :] >= switch_at[:, None])
    topic = np.where(after, second[:, None], first[:, None])
    return topic, switch_at


def make_corpus(n_docs: int = 200, doc_len: int = 128, n_topics: int = 8, p_topic: float = 0.9,
                p_switch: float = 0.5, switch_window=(32, 96), seed: int = 0, first_doc_id: int = 0) -> Corpus:
    """Sample `n_docs` documents of `doc_len` tokens (vectorised over documents; seeded).

    With probability `p_switch` a document's topic switches once, to a different topic, right after a sentence end
    (PUNCT) that falls inside `switch_window` (token positions). Content words come from the current topic with
    probability `p_topic`, otherwise from one of the other topics, uniformly. Explained in
    chapters/temporal-sae/01_theory.
    """
    check_int("n_docs", n_docs)
    check_int("doc_len", doc_len)
    check_between("p_topic", p_topic, 0, 1, closed="both")
    check_between("p_switch", p_switch, 0, 1, closed="both")
    lo, hi = switch_window
    if not 0 <= lo < hi <= doc_len:
        raise ValueError(f"switch_window must satisfy 0 <= lo < hi <= doc_len, got {switch_window!r}")
    vocab = make_vocabulary(n_topics)
    rng = np.random.default_rng(seed)
    states = _sample_states(rng, n_docs, doc_len)
    topic, switch_at = _sample_topics(rng, states, n_topics, p_switch, switch_window)
    other = (topic + rng.integers(1, max(n_topics, 2), size=topic.shape)) % n_topics
    off_topic = (rng.random(topic.shape) >= p_topic) & (n_topics > 1)
    emitted = np.where(off_topic, other, topic)
    content = np.isin(states, CONTENT)
    within = np.floor(rng.random(topic.shape) * vocab.count[states]).astype(np.int64)
    base = vocab.start[np.where(content, emitted, 0), states]
    tokens = base + within
    emitted = np.where(content, emitted, -1)
    doc = np.broadcast_to((first_doc_id + np.arange(n_docs))[:, None], (n_docs, doc_len)).copy()
    return Corpus(tokens, topic, states, doc, emitted, switch_at, vocab)
