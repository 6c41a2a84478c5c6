"""What the stage shows readers of an executed notebook (repro.book.stage.for_readers, stage_files)."""
import json

from repro.book.stage import MATHJAX_ENTRY, MATHJAX_SOURCE, for_readers, stage_files

DEFAULTS = 'scale = "ci"\nseed = 0\ndevice = "cpu"\n'


def _notebook(injected_source: str) -> bytes:
    return json.dumps({"cells": [
        {"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": DEFAULTS},
        {"cell_type": "code", "metadata": {"tags": ["injected-parameters"]}, "source": injected_source}]}).encode()


def _tags(ipynb: bytes) -> list:
    return json.loads(for_readers(ipynb))["cells"][1]["metadata"]["tags"]


def test_injected_cell_repeating_the_defaults_is_hidden():
    assert "remove-cell" in _tags(_notebook("# Parameters\n" + DEFAULTS))


def test_injected_cell_with_other_values_stays_visible():
    assert "remove-cell" not in _tags(_notebook('# Parameters\nscale = "full"\nseed = 0\ndevice = "cpu"\n'))


def test_a_notebook_is_staged_executed_with_its_source_beside_it_for_download(tmp_path):
    source = b"---\njupytext: {}\n---\n# A page\n"
    (tmp_path / "chapters" / "demo").mkdir(parents=True)
    (tmp_path / "chapters" / "demo" / "01_page.md").write_bytes(source)
    (tmp_path / MATHJAX_SOURCE).mkdir(parents=True)
    (tmp_path / MATHJAX_SOURCE / MATHJAX_ENTRY).write_text("// mathjax")
    executed = tmp_path / "01_page.ipynb"
    executed.write_bytes(_notebook("# Parameters\n" + DEFAULTS))
    files = stage_files(tmp_path, {"chapters/demo/01_page": executed}, report={})
    assert "chapters/demo/01_page.md" not in files
    assert json.loads(files["chapters/demo/01_page.ipynb"])["cells"][0]["source"] == DEFAULTS
    assert files["_static/sources/chapters/demo/01_page.md"] == source
