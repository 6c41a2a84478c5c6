"""Every public function and class of the library outside `repro.book` names the chapter page that explains it
(DESIGN.md §6): its docstring contains `chapters/<slug>/...`, and that file or folder exists."""
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import repro

ROOT = Path(repro.__file__).resolve().parents[2]
PAGE = re.compile(r"chapters/[\w.-]+/[\w.-]*")


def public_modules():
    """Every module under `repro` whose dotted path has no private part, `repro.book` and its modules left out."""
    names = ["repro"]
    for info in pkgutil.walk_packages(repro.__path__, "repro."):
        parts = info.name.split(".")
        if parts[1] == "book" or any(p.startswith("_") for p in parts[1:]):
            continue
        names.append(info.name)
    return names


def public_objects(module):
    """(qualified name, object) of the public functions and classes defined in `module` itself."""
    for name, obj in vars(module).items():
        if name.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        if getattr(obj, "__module__", None) == module.__name__:
            yield f"{module.__name__}.{name}", obj


def names_a_page(doc: str) -> bool:
    """True if `doc` names chapters/<slug>/... and that file or folder exists (a page may omit its .md)."""
    for ref in PAGE.findall(doc or ""):
        path = ROOT / ref.rstrip(".")
        if path.exists() or path.with_suffix(".md").exists():
            return True
    return False


@pytest.mark.parametrize("module_name", public_modules())
def test_public_functions_and_classes_name_their_chapter(module_name):
    module = importlib.import_module(module_name)
    missing = [name for name, obj in public_objects(module) if not names_a_page(inspect.getdoc(obj))]
    assert not missing, f"docstrings that name no existing chapters/<slug>/ page: {missing}"


def test_the_check_reads_paths():
    assert names_a_page("Explained in chapters/scorer/02_experiments.md.")
    assert names_a_page("Explained in chapters/temporal-sae/01_theory (and later).")
    assert names_a_page("see chapters/scorer/")
    assert not names_a_page("Explained in chapters/no-such-chapter/01_theory.md.")
    assert not names_a_page("Explained in chapters/scorer/99_missing.md.")
    assert not names_a_page("no page at all")
