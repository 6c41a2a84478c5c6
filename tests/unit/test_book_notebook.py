"""The notebook's first cell in one call and glueing a dict in one call (repro.book.notebook, repro.book.claims)."""
import json
import subprocess
import sys

import pytest

import repro.book.full_run as full_run
from repro.book import BookParameterError, Ledger, Run, glue_quietly, start


@pytest.fixture
def glued(monkeypatch):
    """What `FullRun.glue` would glue, caught instead of glued."""
    caught = {}
    monkeypatch.setattr(full_run, "glue_quietly", caught.update)
    return caught


def test_start_returns_the_run_and_a_ledger_and_glues_the_record(glued):
    run, ledger = start("specgd", scale="ci", seed=3, device="cpu")
    assert run == Run(scale="ci", seed=3, device="cpu")
    assert isinstance(ledger, Ledger) and ledger.chapter == "specgd" and ledger.claims == []
    record = full_run.FullRun.load("specgd")
    assert glued["full-commit"].text == record.commit
    assert {f"full-{c['id']}-observed" for c in record.record["claims"]} <= set(glued)


def test_start_without_the_record_glues_nothing(glued):
    run, ledger = start("specgd", glue_record=False)
    assert run.scale == "ci" and ledger.chapter == "specgd" and glued == {}


def test_start_seeds_as_setup_does():
    import numpy as np

    start("specgd", seed=5, glue_record=False)
    first = np.random.rand()
    start("specgd", seed=5, glue_record=False)
    assert np.random.rand() == first


def test_a_missing_record_is_an_error_at_ci_and_nothing_at_full(glued):
    with pytest.raises(FileNotFoundError, match="no-such-chapter"):
        start("no-such-chapter")
    run, _ = start("no-such-chapter", scale="full")
    assert run.full and glued == {}


@pytest.mark.parametrize("kwargs, error, message", [
    ({"chapter": "Not A Slug"}, ValueError, "chapter slug"),
    ({"chapter": "specgd", "scale": "huge"}, BookParameterError, "scale='huge'"),
    ({"chapter": "specgd", "seed": -1}, BookParameterError, "seed=-1"),
    ({"chapter": "specgd", "glue_record": "yes"}, ValueError, "glue_record"),
])
def test_start_names_a_bad_argument(kwargs, error, message):
    with pytest.raises(error, match=message):
        start(**kwargs)


@pytest.mark.parametrize("values, message", [
    ([("a", 1)], "dict of name -> value"),
    ({"": 1}, "non-empty strings"),
    ({3: 1}, "non-empty strings"),
])
def test_glue_quietly_names_bad_input(values, message):
    with pytest.raises(ValueError, match=message):
        glue_quietly(values)


def test_glue_quietly_outside_a_kernel_does_nothing():
    assert glue_quietly({"a": 1.5, "b": "text"}) is None


def test_glue_quietly_glues_each_value_exactly_as_one_glue_call_does():
    """Inside IPython the outputs of one `glue_quietly` call equal those of one `glue(..., display=False)` per name,
    in the same order and with the same text/plain (numbers, numpy scalars, strings, `PlainText`)."""
    script = (
        "import json, numpy as np\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "from IPython.utils.capture import capture_output\n"
        "InteractiveShell.instance()\n"
        "from myst_nb import glue\n"
        "from repro.book import glue_quietly\n"
        "from repro.book.claims import PlainText\n"
        "values = {'a': 0.1, 'b': np.float64(2.5), 'c': 3, 'held': PlainText('held'), 'e': 'text', 'f-1': 1e-9}\n"
        "with capture_output() as one:\n"
        "    for name, value in values.items():\n"
        "        glue(name, value, display=False)\n"
        "with capture_output() as many:\n"
        "    glue_quietly(values)\n"
        "print(json.dumps([[[o.data, o.metadata] for o in c.outputs] for c in (one, many)]))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    one, many = json.loads(done.stdout.strip().splitlines()[-1])
    assert many == one
    assert [m["scrapbook"]["name"] for _, m in many] == ["a", "b", "c", "held", "e", "f-1"]
    assert [list(d.values())[0] for d, _ in many][:4] == ["0.1", "np.float64(2.5)", "3", "held"]
