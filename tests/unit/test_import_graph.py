"""The shape of `lib/repro` (DESIGN.md §1; issue 44): who may import whom.

Read from the source with `ast`, every `import` counted, including those inside functions; a chapter's notebooks count
as part of its package:

- no cycle between modules;
- the substrate (`repro.common`, `repro.nn`) never imports the book's machinery (`repro.book`), which is built on it;
- no chapter's package imports another chapter's (what two chapters share is substrate);
- every substrate module outside `repro.common` is imported by at least two chapters (DESIGN.md §1: code moves to the
  substrate when a second chapter needs it). `SINGLE_CLIENT_SUBSTRATE` lists the exceptions (none since issue 44
  moved them into their chapters): the test fails on a new one, and on a listed one that is fixed, so the list only
  shrinks.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

import repro

LIB = Path(repro.__file__).resolve().parent
ROOT = LIB.parents[1]
SUBSTRATE = ("common", "nn")
#: Substrate modules with one chapter as client: module -> that chapter (issue 44, part 3, moved the last ones).
SINGLE_CLIENT_SUBSTRATE: dict[str, str] = {}


def module_name(path: Path) -> str:
    parts = path.relative_to(LIB.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(LIB.rglob("*.py")) if "__pycache__" not in p.parts}


def imports_of(name: str, path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) for every import statement of module `name`, anywhere in its source (`import a.b` gives
    ("a.b", []); relative imports resolved)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    return imports_in(path.read_text(encoding="utf-8"), package)


def imports_in(source: str, package: str) -> list[tuple[str, list[str]]]:
    """(module, names) of every import statement in `source`, relative ones resolved against `package`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found.append((base, [alias.name for alias in node.names]))
    return found


def resolve(base: str, names: list[str], known: set[str], exports: dict[str, dict[str, str]]) -> set[str]:
    """The repro modules one import statement uses: `base`, each name that is itself a module, and, for a name a
    package re-exports from one of its modules (`from repro.nn import SAE`), that module."""
    used = {base} | {f"{base}.{n}" for n in names}
    used |= {exports.get(base, {}).get(n, base) for n in names}
    return {m for m in used if m in known}


def package_exports(mods: dict[str, Path]) -> dict[str, dict[str, str]]:
    """For each package, the names its __init__ imports from its own modules: {package: {name: module}}."""
    out = {}
    for name, path in mods.items():
        if path.name == "__init__.py":
            out[name] = {n: base for base, names in imports_of(name, path) if base.startswith(name + ".")
                         for n in names}
    return out


def notebook_source(page: Path) -> str:
    """The Python of a MyST notebook's code cells (IPython magics and shell lines left out)."""
    import jupytext

    cells = [c.source for c in jupytext.read(page).cells if c.cell_type == "code"]
    return "\n".join(line for cell in cells for line in cell.splitlines() if not line.lstrip().startswith(("%", "!")))


def notebooks() -> dict[str, Path]:
    """Each chapter notebook as a pseudo-module of its chapter's package: repro.<package>.<notebook: 01_theory>."""
    return {f"repro.{p.parent.name.replace('-', '_')}.<notebook: {p.stem}>": p
            for p in sorted((ROOT / "chapters").glob("*/*.md")) if p.parent.name != "appendix"
            and "code-cell" in p.read_text(encoding="utf-8")}


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    """Module (or chapter notebook) -> the repro modules it uses (a module's name never in its own set)."""
    mods = modules()
    known, exports = set(mods), package_exports(mods)
    out = {name: set().union(*(resolve(b, ns, known, exports) for b, ns in imports_of(name, path))) - {name}
           for name, path in mods.items()}
    for name, page in notebooks().items():
        out[name] = set().union(*(resolve(b, ns, known, exports) for b, ns in imports_in(notebook_source(page), "")))
    return out


def top(name: str) -> str:
    return name.split(".")[1] if name.count(".") else ""


def chapter_packages() -> set[str]:
    return {p.name.replace("-", "_") for p in (ROOT / "chapters").iterdir() if p.is_dir() and p.name != "appendix"}


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle as a list of modules (first repeated at the end), or [] when there is none."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = "done"
        return []

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return []


def test_every_chapter_has_its_package_and_the_substrate_is_as_listed():
    tops = {top(m) for m in modules()} - {""}
    assert chapter_packages() <= tops, f"chapters without a package: {sorted(chapter_packages() - tops)}"
    assert tops - chapter_packages() == {"book", *SUBSTRATE}, "a package that is neither a chapter, the book nor " \
        f"listed substrate: {sorted(tops - chapter_packages() - {'book', *SUBSTRATE})}"


def test_no_module_imports_itself_around_a_cycle(graph):
    cycle = find_cycle(graph)
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_a_planted_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []


def test_the_substrate_never_imports_the_book(graph):
    bad = sorted(f"{m} -> {d}" for m, ds in graph.items() if top(m) in SUBSTRATE for d in ds if top(d) == "book")
    assert not bad, "substrate importing repro.book: " + "; ".join(bad)


def test_no_chapter_imports_another_chapter(graph):
    chapters = chapter_packages()
    bad = sorted(f"{m} -> {d}" for m, ds in graph.items() if top(m) in chapters for d in ds
                 if top(d) in chapters and top(d) != top(m))
    assert not bad, "a chapter importing another chapter (move what they share to the substrate): " + "; ".join(bad)


def clients(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Substrate module -> the chapters that use it: directly, through a substrate module they use, or as the package
    of one (a package's own re-exports are not followed: `from repro.nn import SAE` uses repro.nn and repro.nn.sae,
    not every module of repro.nn)."""
    chapters = chapter_packages()
    users = defaultdict(set)
    for m, ds in graph.items():
        if top(m) not in chapters:
            continue
        seen, todo = set(), list(ds)
        while todo:
            d = todo.pop()
            if d in seen or top(d) not in SUBSTRATE:
                continue
            seen.add(d)
            users[d].add(top(m))
            todo.append(d.rpartition(".")[0])          # importing a.b.c runs the package a.b too
            if not (LIB.parent / (d.replace(".", "/") + "/__init__.py")).exists():
                todo.extend(graph[d])
    return users


def test_substrate_has_two_chapters_as_clients_or_is_a_listed_debt(graph):
    users = clients(graph)
    substrate = sorted(m for m in graph if top(m) in SUBSTRATE and top(m) != "common")
    single = {m: ", ".join(sorted(users[m])) or "none" for m in substrate if len(users[m]) < 2}
    new = {m: c for m, c in single.items() if m not in SINGLE_CLIENT_SUBSTRATE}
    assert not new, f"substrate with fewer than two chapters as clients (move it into its chapter): {new}"
    fixed = sorted(set(SINGLE_CLIENT_SUBSTRATE) - set(single))
    assert not fixed, f"now shared or gone, remove from SINGLE_CLIENT_SUBSTRATE: {fixed}"


MAX_FUNCTION_LINES = 60


def long_functions(source: str) -> list[tuple[str, int]]:
    """(name, lines) of every function in `source` longer than MAX_FUNCTION_LINES, docstring included."""
    return [(n.name, n.end_lineno - n.lineno + 1) for n in ast.walk(ast.parse(source))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > MAX_FUNCTION_LINES]


def test_no_function_of_the_library_is_over_60_lines():
    assert long_functions("def f():\n" + "    x = 1\n" * 60) == [("f", 61)]      # the counter finds a planted one
    found = {name: found for name, path in modules().items() if (found := long_functions(path.read_text()))}
    assert not found, f"functions over {MAX_FUNCTION_LINES} lines (split them into named steps): {found}"
