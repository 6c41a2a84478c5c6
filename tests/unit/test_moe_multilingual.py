"""Unit tests of repro.moe_multilingual (chapters/moe-multilingual): the languages are parallel and their
vocabularies disjoint, the divergence matches scipy, the expert sets and overlaps, steering, CKA, and a few training
steps of the chapter's model with a checkpoint round trip."""
import numpy as np
import pytest
import torch
from scipy.spatial.distance import jensenshannon

from repro import moe_multilingual as mm
from repro.common import thread_limit
from repro.moe_multilingual.analysis import analyse, layer_windows
from repro.nn import Transformer, load_checkpoint, save_checkpoint


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny models: one thread is fastest, and a busy machine is not oversubscribed."""
    with thread_limit(1):
        yield


def _concepts(lex, l):
    """token id -> concept label for language l (stems of split nouns carry the noun; suffixes and case markers
    are grammar)."""
    out = {}
    for k, (stem, suffix) in enumerate(lex.noun[l]):
        out[int(stem)] = f"noun{k}"
        if suffix >= 0:
            out[int(suffix)] = "grammar"
    out.update({int(t): f"verb{k}" for k, t in enumerate(lex.verb[l])})
    out.update({int(t): f"num{k}" for k, t in enumerate(lex.num[l])})
    out.update({t: ("grammar" if w in ("NOM", "ACC") else w) for w, t in lex.word[l].items()})
    return out


def test_vocabularies_are_disjoint_and_cover_the_vocab():
    lex = mm.make_lexicon()
    sets = [set(_concepts(lex, l)) for l in range(lex.n_languages)]
    for a in range(len(sets)):
        lo, hi = lex.blocks[a]
        assert sets[a] == set(range(lo, hi))
        assert lex.tag[a] not in sets[a]
        for b in range(a + 1, len(sets)):
            assert not sets[a] & sets[b]
    assert max(hi for _, hi in lex.blocks) == lex.vocab_size
    assert [lex.language_of(t) for t in (0, lex.tag[2], lex.blocks[3][0])] == [-1, -1, 3]


def test_parallel_sentences_say_the_same_thing_in_every_language():
    corpus = mm.build_corpus(0)
    lex = corpus.lex
    tokens, masks = corpus.parallel_sentences(50, seed=1)
    assert tokens.shape[:2] == (lex.n_languages, 50)
    for i in range(50):
        bags = []
        for l in range(lex.n_languages):
            row = tokens[l, i][masks[l, i]].tolist()
            assert tokens[l, i, 0] == lex.tag[l]
            assert all(lex.language_of(t) == l for t in row)
            c = _concepts(lex, l)
            bags.append(sorted(c[t] for t in row if c[t] != "grammar"))
        assert all(b == bags[0] for b in bags)
    # word orders differ: English SVO puts the verb second, VSO first
    f = (0, 1, 2, 3)
    en, l2 = lex.render_frame(0, f), lex.render_frame(lex.index("l2"), f)
    assert en[1] == lex.verb[0][1] and l2[0] == lex.verb[lex.index("l2")][1]


def test_task_prompts_are_parallel_and_answers_right():
    corpus = mm.build_corpus(3)
    lex = corpus.lex
    assert sorted(corpus.train_verbs.tolist() + corpus.test_verbs.tolist()) == list(range(mm.languages.N_VERBS))
    answers = None
    for l in range(lex.n_languages):
        prompts, last, ans = corpus.task_prompts(l, 40, seed=5)
        answers = ans if answers is None else answers
        assert np.array_equal(ans, answers)
        c = _concepts(lex, l)
        for row, end, a in zip(prompts.tolist(), last, ans):
            assert c[row[end]] == "A" and c[row[end - 1]] in ("Qs", "Qo")
            verb = next(int(c[t][4:]) for t in row[1:end] if c[t].startswith("verb"))
            assert verb in corpus.test_verbs
            nouns = [c[t] for t in row[1:end] if c[t].startswith("noun")]
            assert f"noun{a}" in nouns


def test_training_rows_hold_out_test_verbs_and_the_unseen_language():
    corpus = mm.build_corpus(0)
    lex = corpus.lex
    rows = corpus.training_rows(1500, seed=0)
    assert rows.shape == (1500, corpus.cfg.seq_len)
    unseen = lex.index("l5")
    assert not ((rows >= lex.blocks[unseen][0]) & (rows < lex.blocks[unseen][1])).any()
    assert not (rows == lex.tag[unseen]).any()
    n_task = {l: 0 for l in range(lex.n_languages)}
    for l in corpus.trained:
        c = _concepts(lex, l)
        for r in rows[rows[:, 0] == lex.tag[l]].tolist():
            if any(c.get(t) in ("Qs", "Qo") for t in r):
                n_task[l] += 1
                if l:
                    verbs = {int(c[t][4:]) for t in r if c.get(t, "").startswith("verb")}
                    assert verbs <= set(corpus.train_verbs.tolist())
    assert n_task[0] > 5 * sum(n_task[l] for l in corpus.trained[1:])   # the task is mostly English


def test_js_divergence_matches_scipy_squared():
    rng = np.random.default_rng(0)
    p, q = rng.dirichlet(np.ones(8), 100), rng.dirichlet(np.ones(8), 100)
    p[0, :3] = 0
    p[0] /= p[0].sum()
    ours = mm.js_divergence(p, q)
    assert np.max(np.abs(ours - jensenshannon(p, q, axis=1) ** 2)) < 1e-9
    assert np.allclose(mm.js_divergence(p, p), 0)
    assert np.all(mm.normalized_js(p, q) >= ours)                    # the room is at most log E
    with pytest.raises(ValueError, match="sum to 1"):
        mm.js_divergence(p * 2, q)


def test_divergence_by_layer_and_sequence_routing():
    gates = torch.tensor([[[1.0, 0, 0], [0, 1.0, 0], [0.5, 0.5, 0]]])
    mask = torch.tensor([[True, True, False]])
    assert np.allclose(mm.sequence_routing(gates, mask), [[0.5, 0.5, 0]])
    r = np.random.default_rng(1).dirichlet(np.ones(4), (3, 2, 5))
    d = mm.divergence_by_layer(r)
    assert d.shape == (3, 2) and np.allclose(d[0], 0)
    items = mm.divergence_items(r)
    assert items.shape == (3, 2, 5) and np.allclose(items.mean(-1), d)
    with pytest.raises(ValueError, match="reference"):
        mm.divergence_by_layer(r, reference=3)


def test_expert_sets_and_overlap():
    ch = [torch.tensor([[[0, 1], [0, 2]]])]
    f = mm.expert_fractions(ch, torch.tensor([[True, True]]), 3)
    assert np.allclose(f, [[1.0, 0.5, 0.5]])
    ch2 = [torch.tensor([[[0, 1], [0, 2], [1, 2]], [[2, 1], [0, 1], [0, 2]]])]
    mask2 = torch.tensor([[True, True, False], [True, False, True]])
    hits, tokens = mm.expert_counts(ch2, mask2, 3)
    assert hits.shape == (2, 1, 3) and tokens.tolist() == [2, 2]
    assert np.allclose(hits.sum(0) / tokens.sum(), mm.expert_fractions(ch2, mask2, 3))
    task = np.array([[0.5, 0.0, 0.1], [0.0, 0.4, 0.0]])
    lang = np.array([[[0.0, 0.6, 0.0], [0.0, 0.45, 0.0]]])
    assert mm.experts_above(task, 0.3) == {(0, 0), (1, 1)}
    assert mm.experts_above(lang, 0.3) == {(0, 1), (1, 1)}
    ov = mm.overlap_by_tau(task, lang, [0.0, 0.3, 0.42])
    assert ov.tolist() == [[3, 2, 1], [2, 2, 1], [1, 2, 0]]


def test_steering_functions():
    z = torch.tensor([[0.0, 1.0, 2.0, 3.0]])
    soft = mm.steer_fn([0], "soft", lam=0.5)(z)
    assert torch.allclose(soft[0, 0], 0.5 * z.std()) and torch.equal(soft[0, 1:], z[0, 1:])
    on = mm.steer_fn([0, 1], "on")(z)
    assert set(on.topk(2).indices[0].tolist()) == {0, 1}
    off = mm.steer_fn([3], "off")(z)
    assert off[0, 3] < z.min() and 3 not in off.topk(2).indices[0].tolist()
    with pytest.raises(ValueError, match="mode"):
        mm.steer_fn([0], "sideways")


def test_steered_context_changes_routing_and_restores_it():
    corpus = mm.build_corpus(0)
    torch.manual_seed(0)
    model = Transformer(mm.MultilingualConfig(n_layers=3).model_config(corpus.lex.vocab_size, 32)).eval()
    x = corpus.task_prompts(0, 10, seed=0)[0]
    before = model(x).experts[1]
    with mm.steered(model, {1: [5]}, "on"):
        assert (model(x).experts[1] == 5).any(-1).all()
    assert torch.equal(model(x).experts[1], before)
    assert layer_windows(6) == {"middle": [2, 3], "edges": [0, 5]}


def test_linear_cka():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 6))
    q, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    assert abs(mm.linear_cka(x, 3 * x @ q) - 1) < 1e-9
    assert mm.linear_cka(x, rng.normal(size=(50, 6))) < 0.5


def test_a_few_training_steps_analysis_and_checkpoint_round_trip(tmp_path):
    corpus = mm.build_corpus(0)
    cfg = mm.MultilingualConfig(n_layers=3, d_model=32, d_expert=16, batch_size=8)
    model, hist = mm.train_model(corpus, cfg, seed=0, steps=3)
    assert len(hist["loss"]) == 3 and hist["steps_per_second"] > 0
    path = save_checkpoint(model, tmp_path / "m.pt", command="test", seed=0)
    again, prov = load_checkpoint(path)
    x = corpus.task_prompts(1, 10, seed=0)[0]
    assert torch.allclose(model(x).logits, again(x).logits) and prov["seed"] == 0
    study = analyse(model, corpus, n_sentences=20, n_task_rows=20, n_questions=20)
    assert study.div.shape == (corpus.lex.n_languages, 3) and np.allclose(study.div[0], 0)
    assert set(study.correct) == {c[0] for c in mm.analysis.CONDITIONS}
    assert np.allclose(study.extra["div_items"].mean(-1), study.div)
    reps = mm.analysis.item_replicates(study, n_resamples=200, seed=1)
    obs = mm.analysis.observables(study)
    assert reps["unseen_gap"].shape == (200,) and reps["overlap_03"].shape == (200,)
    lo, hi = mm.analysis.seed_item_interval([reps["unseen_gap"]])
    assert lo <= obs["unseen_gap"] <= hi or abs(obs["unseen_gap"] - np.median(reps["unseen_gap"])) < 0.1
    lo2, hi2 = mm.analysis.seed_item_interval([reps["unseen_gap"], reps["unseen_gap"] + 1.0], seed=2)
    assert lo2 < hi2 and lo2 > lo - 0.01 and hi2 < hi + 1.01
    with pytest.raises(ValueError, match="corpus"):
        mm.train_model("corpus")
