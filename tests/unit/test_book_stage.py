"""What the stage shows readers of an executed notebook (repro.book.stage.for_readers)."""
import json

from repro.book.stage import for_readers

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
