"""Execute one notebook source with papermill, in a child process of its own (DESIGN.md §2, step 2).

Each notebook runs in its own process so that it gets its own environment: its share of the CPU threads, the file
its claim ledger writes to, and `REPRO_BUILD=1` (which keeps progress bars out of the published output).
`python -m repro.book.execute SOURCE OUTPUT PARAMS_JSON` is what the build calls; `execute()` calls it.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..common.timing import stopwatch
from .records import read_records

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                    "REPRO_THREADS")


@dataclass
class Execution:
    """What running one notebook produced."""

    status: str                  # "ok" or "failed"
    seconds: float
    error: str = ""
    claims: list = field(default_factory=list)
    note: str = ""               # e.g. that a first try timed out and a second one ran


#: OpenMP threads that wait for work sleep instead of spinning. On a machine whose cores are all busy (two notebooks on
#: two cores), a spinning thread takes the core its partner needs: and-or-templates' CNN, which trains under
#: `thread_limit(2)`, ran about 35 s spinning and 6-9 s passive, with the same weights. It changes how idle threads
#: wait, never how many there are or what they compute.
PASSIVE_WAIT = {"OMP_WAIT_POLICY": "PASSIVE"}


def thread_env(threads: int) -> dict:
    """Environment variables that cap BLAS, OpenMP and torch at `threads` threads (and let idle OpenMP threads sleep)."""
    return {**{name: str(threads) for name in THREAD_VARIABLES}, **PASSIVE_WAIT}


def execute(source: Path, output: Path, params: dict, *, threads: int, timeout: float, name: str = "",
            retries: int = 1) -> Execution:
    """Run `source` (a MyST notebook) with `params` into `output` (.ipynb); never raises for a notebook's own error.

    A run that times out is tried again, `retries` more times (a notebook that hangs once, in a kernel or thread pool
    of the machine, should not sink the build; one that hangs every time still fails). The result's error says where
    each timed-out try stopped, read from the output notebook that papermill saves as each cell starts.
    """
    output.parent.mkdir(parents=True, exist_ok=True)
    notes = []
    for _ in range(retries + 1):
        result = _execute_once(source, output, params, threads=threads, timeout=timeout, name=name)
        if not result.error.startswith("timed out"):
            break
        notes.append(result.error)
    if notes:
        result.note = "; ".join(f"try {i + 1} {n}" for i, n in enumerate(notes))
        if result.status == "failed":
            result.error = result.note
    return result


def _execute_once(source: Path, output: Path, params: dict, *, threads: int, timeout: float, name: str) -> Execution:
    claims_file = output.with_suffix(".claims.jsonl")
    claims_file.unlink(missing_ok=True)
    error_file = output.with_suffix(".error.txt")
    error_file.unlink(missing_ok=True)
    output.unlink(missing_ok=True)
    env = {**os.environ, **thread_env(threads), "REPRO_BUILD": "1", "REPRO_CLAIMS_FILE": str(claims_file),
           "REPRO_NOTEBOOK": name or str(source), "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    with stopwatch() as watch:
        # a session of its own, so that a timeout ends the executor and its kernel together
        proc = subprocess.Popen([sys.executable, "-m", "repro.book.execute", str(source), str(output),
                                 json.dumps(params), str(error_file)], env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            _, stderr = proc.communicate(timeout=timeout)
            failed = proc.returncode != 0
            error = error_file.read_text().strip() if error_file.exists() else ""
            if failed and not error:
                error = (stderr.strip().splitlines() or ["the executor exited with status %d" % proc.returncode])[-1]
        except subprocess.TimeoutExpired:
            _kill_session(proc)
            failed, error = True, f"timed out after {timeout:.0f} s, {where_it_stopped(output)}"
    return Execution(status="failed" if failed else "ok", seconds=round(watch.seconds, 2), error=error,
                     claims=read_records(claims_file))


def _kill_session(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.communicate()


def where_it_stopped(output: Path) -> str:
    """Which cell of a partly executed notebook was running (papermill marks a cell "running" and saves the notebook
    as the cell starts): 'in cell N: <its first line>', or where else the run stood."""
    try:
        cells = json.loads(Path(output).read_text())["cells"]
    except (OSError, ValueError, KeyError):
        return "before the notebook's first cell started (while the kernel started?)"
    status = [c.get("metadata", {}).get("papermill", {}).get("status") for c in cells]
    for i, (cell, st) in enumerate(zip(cells, status)):
        if st == "running":
            source = "".join(cell.get("source", "")).strip().splitlines()
            return f"in cell {i}: {source[0][:80] if source else '(empty)'}"
    if status and all(st == "completed" for st in status if st is not None):
        return "after its last cell (while the kernel shut down?)"
    return "between cells"


def _describe(err) -> str:
    """One line naming the failing cell, from papermill's execution error."""
    cell = getattr(err, "exec_count", None)
    index = getattr(err, "cell_index", None)
    where = f"cell {index}" + (f" (In [{cell}])" if cell else "") if index is not None else "a cell"
    evalue = (getattr(err, "evalue", "") or "").strip().splitlines()
    return f"{where}: {getattr(err, 'ename', type(err).__name__)}: {evalue[0] if evalue else ''}"


def _main(source: str, output: str, params_json: str, error_file: str) -> int:
    import jupytext
    import nbformat
    import papermill
    from papermill.exceptions import PapermillExecutionError

    source_path = Path(source)
    notebook = jupytext.read(source_path)
    notebook.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    staged_input = Path(output).with_suffix(".source.ipynb")
    nbformat.write(notebook, staged_input)
    try:
        papermill.execute_notebook(str(staged_input), output, parameters=json.loads(params_json),
                                   kernel_name="python3", cwd=str(source_path.parent), progress_bar=False,
                                   log_output=False, report_mode=False)
    except PapermillExecutionError as err:
        Path(error_file).write_text(_describe(err))
        return 1
    except Exception as err:  # a notebook that cannot even start: bad JSON, missing kernel, no parameters cell
        Path(error_file).write_text(f"{type(err).__name__}: {err}".splitlines()[0])
        return 1
    finally:
        staged_input.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: python -m repro.book.execute SOURCE OUTPUT PARAMS_JSON ERROR_FILE")
    sys.exit(_main(*sys.argv[1:]))
