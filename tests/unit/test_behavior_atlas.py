"""Unit tests of repro.behavior_atlas (chapters/behavior-atlas): the label map, the schema round trip, F1 against
scikit-learn, the generator's built-in structure, the stacked models, validation, and a tiny training run."""
import numpy as np
import pytest
import torch
from sklearn.metrics import f1_score

from repro import behavior_atlas as ba


def test_label_map_has_one_global_index_per_word_and_synonyms_share_it():
    assert ba.label_map_violations(ba.LABEL_MAP, ba.VOCABULARIES) == []
    assert len(ba.GLOBAL_CLASSES) == ba.N_GLOBAL == 25
    m = ba.LABEL_MAP
    assert m["emo-a"]["joy"] == m["emo-b"]["happiness"] == ba.global_index("emotion", "happy")
    assert m["emo-a"]["anger"] == m["emo-b"]["angry"]
    assert m["sen-b"]["neg"] == m["sen-c"]["-2"] == ba.global_index("sentiment", "negative")
    assert m["dep-c"]["yes"] == ba.global_index("depression", "depressed")


def test_label_map_checks_catch_errors():
    bad = {k: dict(v) for k, v in ba.LABEL_MAP.items()}
    bad["emo-b"]["happiness"] = ba.global_index("emotion", "sad")      # a synonym on another index
    assert any("happy" in p for p in ba.label_map_violations(bad, ba.VOCABULARIES))
    bad["emo-b"]["angry"] = ba.global_index("sentiment", "neutral")   # outside the domain
    assert any("outside" in p for p in ba.label_map_violations(bad, ba.VOCABULARIES))
    with pytest.raises(ValueError, match="no global class"):
        ba.build_label_map({"x": ("emotion", ["grumpy"])})
    with pytest.raises(ValueError, match="domain"):
        ba.global_index("mood", "happy")


@pytest.mark.parametrize("k", [2, 3, 7])
def test_f1_equals_sklearn(k):
    rng = np.random.default_rng(k)
    for _ in range(20):
        yt, yp = rng.integers(0, k, 50), rng.integers(0, k, 50)
        yp[:5] = k + 1                                   # a predicted class absent from y_true
        for avg in ("weighted", "macro"):
            assert abs(ba.f1(yt, yp, avg) - f1_score(yt, yp, average=avg, zero_division=0)) < 1e-9


def test_metrics_validate():
    with pytest.raises(ValueError, match="average"):
        ba.f1([0, 1], [0, 1], "micro")
    with pytest.raises(ValueError, match="y_true"):
        ba.f1([0, 1], [0])
    assert ba.task_scores({"a": 0.5, "b": 0.7, "c": 1.0}, {"a": "EMO", "b": "EMO", "c": "DEP"}) == \
        pytest.approx({"EMO": 0.6, "DEP": 1.0})


@pytest.fixture(scope="module")
def atlas():
    return ba.make_atlas(3, n_test=60, scale_train=0.1)


def test_generator_builds_its_structure(atlas):
    assert set(atlas.splits) == set(ba.SPEC) and len(ba.TRAIN_SETS) == 8
    dep = atlas["dep-c"]["train"]
    assert len(dep) == 200 and dep.x.shape[1:] == (3, ba.FEATURES)
    assert np.all(dep.mask[:, ba.MODALITIES.index("visual")] == 0)          # no visual in the depression set
    assert np.all(dep.mask.sum(1) >= 1)                                      # never every modality dropped
    sar = atlas["sar-e"]["test"]
    assert np.all(sar.latents["v"][sar.y == 1] <= 0) and np.array_equal(sar.y, sar.latents["h"])
    assert np.allclose(sar.latents["v_text"], sar.latents["v"] * (1 - 2 * sar.latents["h"]))
    assert np.all(sar.desc[sar.desc_mask == 0] == 0)
    z = ba.sample_latents(20000, np.random.default_rng(0), rho=0.0)
    assert abs(np.corrcoef(z["d"], z["v"])[0, 1]) < 0.03
    z = ba.sample_latents(20000, np.random.default_rng(0), rho=0.8)
    assert np.corrcoef(z["d"], z["v"])[0, 1] < -0.5


def test_schema_round_trip(atlas, tmp_path):
    paths = ba.write_atlas(atlas, tmp_path)
    back = ba.read_atlas(tmp_path, "test", atlas.label_map)
    for name in ba.SPEC:
        s = atlas[name]["test"]
        x, mask, desc, y = back[name]
        np.testing.assert_allclose(x, s.x, atol=1e-6)
        np.testing.assert_array_equal(mask, s.mask)
        np.testing.assert_allclose(desc, s.desc, atol=1e-6)
        np.testing.assert_array_equal(y, ba.global_labels(name, s.y))
    rec = ba.read_jsonl(paths["train"], atlas.label_map)[0]
    assert set(ba.FIELDS) <= set(rec)
    with pytest.raises(ValueError, match="class_label"):
        ba.validate_record({**rec, "class_label": 999}, atlas.label_map)
    with pytest.raises(ValueError, match="modality_signature"):
        ba.validate_record({**rec, "modality_signature": "smell"}, atlas.label_map)


def test_stacked_models_are_independent_and_train(atlas):
    torch.manual_seed(0)
    pools = [ba.make_pool(atlas, ["anx-f"]), ba.make_pool(atlas, ba.TRAIN_SETS, temperature=0.5)]
    params = ba.init_params(2, hidden=8, seed=1)
    test = ba.make_pool(atlas, ["anx-f"], "test")
    x, mask = test.x[None].expand(2, *test.x.shape), test.mask[None].expand(2, *test.mask.shape)
    one = {k: v[1:] for k, v in params.items()}
    np.testing.assert_allclose(ba.logits(params, x, mask)[1:], ba.logits(one, x[1:], mask[1:]), atol=1e-5)
    losses = ba.train(params, pools, 60, seed=0)
    assert np.mean(losses[-10:]) < np.mean(losses[:10])
    pred = ba.predict(params, test)
    assert pred.shape == (2, len(test)) and np.all(test.valid[torch.arange(len(test)), pred[0]].numpy())


def test_adapter_is_the_identity_at_alpha_zero_or_without_a_descriptor(atlas):
    p = ba.init_params(1, seed=0)
    t = torch.randn(1, 5, 32)
    desc, dmask = torch.randn(1, 5, ba.DESCRIPTOR), torch.ones(1, 5)
    torch.testing.assert_close(ba.adapt(p, t, desc, dmask), t)
    p["alpha"][:] = 0.7
    torch.testing.assert_close(ba.adapt(p, t, desc, torch.zeros(1, 5)), t)
    assert not torch.allclose(ba.adapt(p, t, desc, dmask), t)


def test_flat_head_uses_global_columns(atlas):
    a = ba.make_pool(atlas, ["emo-a"], "test", head="flat")
    b = ba.make_pool(atlas, ["emo-b"], "test", head="flat")
    joy = ba.FLAT + ba.LABEL_MAP["emo-a"]["joy"]
    assert joy == ba.FLAT + ba.LABEL_MAP["emo-b"]["happiness"]
    assert a.valid[0, joy] and b.valid[0, joy]


def test_validation_names_the_argument(atlas):
    with pytest.raises(ValueError, match="head"):
        ba.make_pool(atlas, ["emo-a"], head="tree")
    with pytest.raises(ValueError, match="names"):
        ba.make_pool(atlas, "emo-a")
    with pytest.raises(ValueError, match="steps"):
        ba.train(ba.init_params(1), [ba.make_pool(atlas, ["emo-a"])], 0)
    with pytest.raises(ValueError, match="pools"):
        ba.train(ba.init_params(2), [ba.make_pool(atlas, ["emo-a"])], 5)
    with pytest.raises(ValueError, match="scale"):
        ba.run_study(0, "huge")
    with pytest.raises(ValueError, match="seed"):
        ba.make_atlas(-1)
    with pytest.raises(ValueError, match="rho"):
        ba.sample_latents(5, np.random.default_rng(0), rho=2.0)
