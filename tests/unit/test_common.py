"""Unit tests of repro.common (chapters/appendix/reproducibility.md): checks, spreads and intervals, running means,
thread limits, provenance records, markdown tables."""
import json

import numpy as np
import pytest
import torch

from repro import common


def test_check_int_names_the_argument_and_reads_well():
    assert common.check_int("n", np.int64(3)) == 3
    with pytest.raises(ValueError, match="n must be a positive integer, got 0"):
        common.check_int("n", 0)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        common.check_int("seed", -1, 0)
    with pytest.raises(ValueError, match="p must be an integer >= 3"):
        common.check_int("p", 2, 3)
    for bad in (True, 2.0, "2"):
        with pytest.raises(ValueError, match="steps"):
            common.check_int("steps", bad)


def test_number_checks():
    assert common.check_positive("lr", 1e-3) == 1e-3
    assert common.check_non_negative("alpha", 0) == 0.0
    for bad in (0, -1.0, float("nan"), float("inf"), True, np.ones(2)):
        with pytest.raises(ValueError, match="lr must be a positive finite number"):
            common.check_positive("lr", bad)
    with pytest.raises(ValueError, match="alpha must be a non-negative"):
        common.check_non_negative("alpha", -0.5)
    assert common.check_between("gamma", 1, 0, 1, closed="both") == 1.0
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        common.check_between("alpha", 1, 0, 1)
    with pytest.raises(ValueError, match=r"m must be in \[0, 1\)"):
        common.check_between("m", 1.0, 0, 1, closed="left")
    with pytest.raises(ValueError, match="kind must be one of"):
        common.check_choice("kind", "x", ("a", "b"))
    assert common.check_seeds(np.arange(3)) == [0, 1, 2]
    with pytest.raises(ValueError, match="seeds"):
        common.check_seeds([])
    with pytest.raises(ValueError, match="seeds"):
        common.check_seeds([0, -1])


def test_shape_checks():
    common.check_2d("x", np.zeros((2, 3)))
    with pytest.raises(ValueError, match="x must be a 2-d array"):
        common.check_2d("x", np.zeros(3))
    with pytest.raises(ValueError, match="a and b must have the same last dimension"):
        common.check_same_width("a", np.zeros((2, 3)), "b", np.zeros((2, 4)))
    with pytest.raises(ValueError, match="a and b must have the same shape"):
        common.check_same_shape("a", np.zeros((2, 3)), "b", np.zeros((3, 2)))


def test_spread_uses_ddof_1_and_the_standard_error():
    x = [1.0, 2.0, 3.0, 4.0]
    assert common.sample_sd(x) == pytest.approx(np.std(x, ddof=1))
    assert common.standard_error(x) == pytest.approx(np.std(x, ddof=1) / 2)
    m, sd = common.mean_and_sd(np.array([x, x]).T)
    np.testing.assert_allclose(m, [2.5, 2.5])
    np.testing.assert_allclose(sd, np.std(x, ddof=1))
    with pytest.raises(ValueError, match="at least 2"):
        common.sample_sd([1.0])


def test_bootstrap_ci_brackets_the_mean():
    x = np.random.default_rng(0).normal(10, 1, size=50)
    m, lo, hi = common.bootstrap_ci(x)
    assert lo < m < hi and hi - lo < 1.0
    m, lo, hi = common.bootstrap_ci(np.ones((4, 3)))                # all runs equal: a point interval, no warning
    np.testing.assert_allclose([lo, hi], np.ones((2, 3)))
    with pytest.raises(ValueError, match="at least 2"):
        common.bootstrap_ci([1.0])
    with pytest.raises(ValueError, match="confidence"):
        common.bootstrap_ci(x, confidence=1.5)


def test_trailing_and_centred_means():
    np.testing.assert_allclose(common.trailing_mean([1.0, 3.0, 5.0], 2), [1.0, 2.0, 4.0])
    np.testing.assert_allclose(common.trailing_mean([[1.0, 3.0], [2.0, 2.0]], 5), [[1.0, 2.0], [2.0, 2.0]])
    with pytest.raises(ValueError, match="window"):
        common.trailing_mean([1.0], 0)
    np.testing.assert_allclose(common.centred_mean([0.0, 3.0, 0.0, 3.0]), [1.5, 1.0, 2.0, 1.5])
    np.testing.assert_allclose(common.centred_mean([1.0, 2.0], width=1), [1.0, 2.0])
    with pytest.raises(ValueError, match="width"):
        common.centred_mean([1.0], width=0)


def test_thread_limit_restores_torch_threads():
    before = torch.get_num_threads()
    with common.thread_limit(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with common.thread_limit(1, torch_threads=False):         # BLAS / OpenMP pools only
        pass
    assert torch.get_num_threads() == before


def test_provenance_record_is_plain_json():
    rec = common.provenance_record(command="make it", seed=np.int64(3), config={"a": 1}, shape=(2, 3))
    assert {"command", "commit", "time", "seed", "config"} <= set(rec)
    assert rec["time"].endswith("Z") and rec["config"] == {"a": 1}
    json.dumps(rec)
    assert common.provenance_record(time="then")["time"] == "then"


def test_markdown_table():
    text = common.markdown_table(["a", "b"], [[1, "x"], [2.5, "y"]], note="n")
    assert text == "| a | b |\n|---|---|\n| 1 | x |\n| 2.5 | y |\n\nn"
    with pytest.raises(ValueError, match="row 0"):
        common.markdown_table(["a"], [[1, 2]])


def test_markdown_table_keeps_a_pipe_inside_its_cell():
    text = common.markdown_table(["largest |change|", "b"], [["|x|", r"a \| b"]])
    assert text.splitlines()[0] == r"| largest \|change\| | b |"
    assert text.splitlines()[2] == r"| \|x\| | a \| b |"
    assert common.markdown_table(["m"], [["$|x|$"]]).splitlines()[2] == "| $|x|$ |"


def test_the_cluster_bootstrap_resamples_groups_then_items():
    import numpy as np

    from repro.common import bootstrap_ci, cluster_bootstrap_ci

    rng = np.random.default_rng(0)
    one_group = rng.normal(size=400)
    mean, lo, hi = cluster_bootstrap_ci(one_group, np.zeros(400))
    _, plain_lo, plain_hi = bootstrap_ci(one_group)
    assert lo < mean < hi and abs((hi - lo) - (plain_hi - plain_lo)) < 0.05   # one group: the item bootstrap
    # groups that differ widen the interval beyond what the items alone say
    shifted = np.concatenate([rng.normal(loc=m, size=100) for m in (-1.0, 0.0, 1.0)])
    groups = np.repeat([0, 1, 2], 100)
    _, c_lo, c_hi = cluster_bootstrap_ci(shifted, groups)
    _, i_lo, i_hi = cluster_bootstrap_ci(shifted, np.zeros(300))
    assert (c_hi - c_lo) > 2 * (i_hi - i_lo)
    for values, clusters, message in (([1.0, 2.0], [0], "one length"), ([1.0], [0], "at least 2")):
        with pytest.raises(ValueError, match=message):
            cluster_bootstrap_ci(values, clusters)


def test_provenance_says_whether_the_library_differed_from_its_commit(tmp_path):
    import subprocess

    from repro.common.provenance import code_is_dirty, provenance_record

    assert isinstance(provenance_record("x")["dirty"], bool)
    assert not code_is_dirty(tmp_path)                                   # no repository: no commit to differ from
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "m.py").write_text("x = 1\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "w.pt").write_bytes(b"1")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "c"]):
        subprocess.run(git + args, cwd=tmp_path, check=True, capture_output=True)
    assert not code_is_dirty(tmp_path)
    (tmp_path / "data" / "w.pt").write_bytes(b"2")                       # the shipped file being written: not code
    assert not code_is_dirty(tmp_path)
    (tmp_path / "lib" / "m.py").write_text("x = 2\n")
    assert code_is_dirty(tmp_path)


def test_stopwatch_times_its_block_and_stops_when_the_block_ends(monkeypatch):
    clock = iter([10.0, 12.5, 99.0])
    monkeypatch.setattr(common.timing.time, "perf_counter", lambda: next(clock))
    with common.stopwatch() as watch:
        pass
    assert watch.seconds == 2.5            # frozen at the end of the block: later clock readings do not count
    with pytest.raises(RuntimeError), common.stopwatch() as failing:
        monkeypatch.setattr(common.timing.time, "perf_counter", lambda: 20.0)
        failing.start = 19.0
        raise RuntimeError("the block failed")
    assert failing.seconds == 1.0          # stopped on an error too
