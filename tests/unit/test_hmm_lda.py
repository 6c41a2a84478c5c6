"""Unit tests of repro.temporal_sae.hmm_lda (chapters/temporal-sae): shapes, seeding, topic switches, ground truth."""
import numpy as np
import pytest

from repro.temporal_sae.hmm_lda import CONTENT, PUNCT, STATES, TRANSITIONS, make_corpus, make_vocabulary


@pytest.fixture(scope="module")
def corpus():
    return make_corpus(n_docs=300, seed=0)


def test_shapes_and_vocabulary(corpus):
    assert corpus.tokens.shape == corpus.topic.shape == corpus.state.shape == corpus.doc.shape == (300, 128)
    v = corpus.vocab
    assert v.size == len(set(v.words)) == 245              # 21 function words + 8 topics * (14 + 8 + 6)
    assert corpus.tokens.min() >= 0 and corpus.tokens.max() < v.size
    np.testing.assert_allclose(TRANSITIONS.sum(1), 1.0)
    assert isinstance(v.decode(corpus.tokens[0]), str) and v.decode([0, len(v.words) - 1]).startswith("the")


def test_determinism_by_seed():
    a, b, c = make_corpus(n_docs=20, seed=3), make_corpus(n_docs=20, seed=3), make_corpus(n_docs=20, seed=4)
    assert np.array_equal(a.tokens, b.tokens) and np.array_equal(a.topic, b.topic)
    assert not np.array_equal(a.tokens, c.tokens)


def test_topic_switches_once_right_after_a_sentence_end(corpus):
    switched = corpus.switch_at >= 0
    assert 0.4 < switched.mean() < 0.6                       # p_switch = 0.5
    for i in np.flatnonzero(switched):
        s = corpus.switch_at[i]
        assert corpus.state[i, s - 1] == PUNCT
        assert 32 <= s - 1 < 95
        assert (corpus.topic[i, :s] == corpus.topic[i, 0]).all() and (corpus.topic[i, s:] == corpus.topic[i, -1]).all()
        assert corpus.topic[i, 0] != corpus.topic[i, -1]
    assert (corpus.topic[~switched] == corpus.topic[~switched, :1]).all()


def test_ground_truth_is_consistent_with_the_emitted_words(corpus):
    v = corpus.vocab
    assert np.array_equal(v.word_state[corpus.tokens], corpus.state)          # each word's part of speech = its state
    content = np.isin(corpus.state, CONTENT)
    assert np.array_equal(v.word_topic[corpus.tokens][content], corpus.emitted_topic[content])
    assert (corpus.emitted_topic[~content] == -1).all() and (v.word_topic[corpus.tokens][~content] == -1).all()
    on_topic = (corpus.emitted_topic == corpus.topic)[content].mean()
    assert 0.87 < on_topic < 0.93                            # p_topic = 0.9
    assert (corpus.state[:, 0] == STATES.index("DET")).all()
    assert np.array_equal(corpus.doc[:, 0], np.arange(300))


def test_validation_errors():
    with pytest.raises(ValueError, match="n_docs"):
        make_corpus(n_docs=0)
    with pytest.raises(ValueError, match="p_topic"):
        make_corpus(p_topic=1.5)
    with pytest.raises(ValueError, match="switch_window"):
        make_corpus(doc_len=64, switch_window=(32, 96))
    with pytest.raises(ValueError, match="n_topics"):
        make_vocabulary(9)
