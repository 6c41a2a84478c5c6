"""The cache key covers notebook source, every library file, the parameters and the lock file (repro.book.cache)."""
import shutil

import pytest

from repro.book.cache import cache_key

PARAMS = {"scale": "ci", "seed": 0, "device": "cpu"}


@pytest.fixture
def book(tmp_path):
    (tmp_path / "lib" / "repro" / "book").mkdir(parents=True)
    (tmp_path / "lib" / "repro" / "__init__.py").write_text("x = 1\n")
    (tmp_path / "lib" / "repro" / "book" / "style.py").write_text("y = 2\n")
    (tmp_path / "requirements.lock").write_text("numpy==2.0\n")
    nb = tmp_path / "nb.md"
    nb.write_text("# a notebook\n")
    return tmp_path, nb


def test_same_inputs_same_key(book):
    root, nb = book
    assert cache_key(nb, PARAMS, root) == cache_key(nb, dict(reversed(PARAMS.items())), root)


@pytest.mark.parametrize("change", ["source", "lib file", "nested lib file", "new lib file", "params", "lock"])
def test_any_input_changes_the_key(book, change):
    root, nb = book
    before = cache_key(nb, PARAMS, root)
    params = dict(PARAMS)
    if change == "source":
        nb.write_text("# a notebook, edited\n")
    elif change == "lib file":
        (root / "lib" / "repro" / "__init__.py").write_text("x = 2\n")
    elif change == "nested lib file":
        (root / "lib" / "repro" / "book" / "style.py").write_text("y = 3\n")
    elif change == "new lib file":
        (root / "lib" / "repro" / "new.py").write_text("")
    elif change == "params":
        params["seed"] = 1
    else:
        (root / "requirements.lock").write_text("numpy==2.1\n")
    assert cache_key(nb, params, root) != before


def test_bytecode_caches_do_not_change_the_key(book):
    root, nb = book
    before = cache_key(nb, PARAMS, root)
    (root / "lib" / "repro" / "__pycache__").mkdir()
    (root / "lib" / "repro" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    assert cache_key(nb, PARAMS, root) == before
    shutil.rmtree(root / "lib" / "repro" / "__pycache__")
