"""Import-time costs that every notebook of the book would pay (DESIGN.md §5, the time budgets).

`import repro.book` calls `skip_iri_checker()` before anything else, so each notebook kernel (in the build and again
under nbval) and each build process is spared it.
"""
from __future__ import annotations

import sys


def skip_iri_checker() -> None:
    """Keep jsonschema from importing rfc3987_syntax, which builds a Lark grammar at import: about 1.4 s of CPU in
    every process that glues a value (`myst_nb.glue` imports nbformat, whose validator imports jsonschema).

    jsonschema treats the package as optional: without it, it leaves out only its "iri" format check, which neither
    nbformat's notebook schema nor the book asks for. A process that imported jsonschema earlier keeps what it has.
    """
    sys.modules.setdefault("rfc3987_syntax", None)
