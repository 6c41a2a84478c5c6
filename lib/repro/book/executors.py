"""Where the build's notebooks run (DESIGN.md §2, step 2; chapters/appendix/reproducibility.md).

Every execution is an independent job: a notebook source, its parameters, a thread cap, a timeout. Two executors run
a list of jobs and return one result per job, in order:

- `local` (the default): a pool of `workers` threads on this machine, each starting the notebook's own process
  (`repro.book.execute`), as the build always did.
- `dask`: each job is a task on a `dask.distributed` cluster: a `LocalCluster` of `workers` single-threaded worker
  processes when no scheduler address is given, or the running scheduler at `scheduler`. The task runs the same
  `execute()` on the worker and sends back the executed notebook's bytes, its claim records, its seconds and its
  error, which the client writes where the local executor would have. Workers must have the same checkout and
  environment as the client (the task checks: it recomputes the job's cache key on the worker and refuses to run when
  its notebook, library, data or lock file differ). A worker that dies mid-notebook is retried once on another
  worker (the scheduler's `allowed-failures` is 1); if that one dies too, the job is reported as failed with the
  reason, and every other job's result is kept.
"""
from __future__ import annotations

import socket
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..common.timing import stopwatch
from .cache import cache_key
from .execute import Execution, execute
from .machine import available_cores

EXECUTORS = ("local", "dask")
#: How many times the scheduler may lose a worker while it runs a task before giving the task up: 1 = one retry.
ALLOWED_FAILURES = 1


@dataclass(frozen=True)
class Job:
    """One notebook execution: `source` run with `params` into `output` under the book `root`."""

    root: Path
    source: Path
    output: Path
    params: dict
    threads: int
    timeout: float
    name: str
    key: str


Done = Callable[[Job, Execution], None]


def run_jobs(jobs: list[Job], *, executor: str = "local", workers: int = 1, scheduler: str | None = None,
             on_start: Callable[[Job], None] | None = None, on_done: Done | None = None) -> list[Execution]:
    """Run `jobs` with the named executor (`EXECUTORS`); one `Execution` per job, in the jobs' order.

    `on_start(job)` is called when the local executor starts a job (the Dask scheduler starts them out of our sight,
    so there it is not called); `on_done(job, result)` when any job ends."""
    if executor not in EXECUTORS:
        raise ValueError(f"--executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if workers < 1:
        raise ValueError(f"--jobs must be at least 1, got {workers}")
    if scheduler and executor != "dask":
        raise ValueError("--scheduler names a Dask scheduler: add --executor dask")
    if not jobs:
        return []
    if executor == "local":
        return _run_local(jobs, workers, on_start, on_done)
    return _run_dask(jobs, workers, scheduler, on_start, on_done)


def _run_local(jobs, workers, on_start, on_done) -> list[Execution]:
    def one(job: Job) -> Execution:
        if on_start:
            on_start(job)
        result = execute(job.source, job.output, job.params, threads=job.threads, timeout=job.timeout,
                         name=job.name)
        if on_done:
            on_done(job, result)
        return result

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, jobs))


def run_on_worker(job: Job) -> dict:
    """The Dask task: execute `job` on this worker into a scratch folder; return what the client needs.

    Never raises for a notebook's own error (like `execute`); a worker whose checkout differs from the client's
    returns a failed result that says so instead of running stale code.
    """
    here = cache_key(job.source, job.params, job.root) if job.source.exists() else None
    if here != job.key:
        return {"status": "failed", "seconds": 0.0, "claims": [], "notebook": None, "host": socket.gethostname(),
                "error": (f"the worker on {socket.gethostname()} has a different checkout at {job.root} (its "
                          "notebook, lib/repro, data or requirements.lock differ from the client's, or the file is "
                          "missing): check out the same commit there")}
    with tempfile.TemporaryDirectory(prefix="repro-task-") as scratch:
        output = Path(scratch) / job.output.name
        result = execute(job.source, output, job.params, threads=job.threads, timeout=job.timeout, name=job.name)
        notebook = output.read_bytes() if output.exists() else None
    return {"status": result.status, "seconds": result.seconds, "error": result.error, "claims": result.claims,
            "note": result.note, "notebook": notebook, "host": socket.gethostname()}


def _threads_by_host(client) -> dict[str, int]:
    """Each worker host's share of threads per task: its cores (as the local build counts them on the client's
    machine, or psutil's count elsewhere) over the worker threads running there."""
    import psutil


    info = client.scheduler_info(n_workers=-1)["workers"]
    slots: dict[str, int] = {}
    for address, worker in info.items():
        host = address.rsplit(":", 1)[0]
        slots[host] = slots.get(host, 0) + worker["nthreads"]
    here = socket.gethostbyname(socket.gethostname())
    cores = {host: (available_cores() if host.endswith(("127.0.0.1", here)) else psutil.cpu_count() or 1)
             for host in slots}
    return {host: max(1, cores[host] // slots[host]) for host in slots}


#: Seconds to wait for a scheduler's port to accept a connection before saying that nothing listens there.
PORT_PROBE_S = 2


def _port_accepts(address: str) -> str:
    """'' when something accepts TCP connections at a scheduler address (`tcp://host:port`), else why not. A port
    that refuses answers at once, so a wrong address gets its message in at most PORT_PROBE_S seconds instead of
    the Client's whole connect timeout."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    if not parts.hostname or not parts.port:
        return "it is not of the form tcp://HOST:PORT"
    try:
        socket.create_connection((parts.hostname, parts.port), timeout=PORT_PROBE_S).close()
    except OSError as err:
        return str(err) or type(err).__name__
    return ""


def _cluster(workers: int, scheduler: str | None):
    """A Client on the scheduler at `scheduler`, or on a new LocalCluster of `workers` single-threaded processes."""
    import dask
    from distributed import Client, LocalCluster

    if scheduler:
        refused = _port_accepts(scheduler)
        if refused:
            raise ValueError(f"--scheduler {scheduler}: no Dask scheduler answered there ({refused}); start one with "
                             "`dask scheduler` (see the README)")
        try:
            return Client(scheduler, timeout="20s"), None
        except (OSError, TimeoutError) as err:
            raise ValueError(f"--scheduler {scheduler}: no Dask scheduler answered there ({err}); start one with "
                             "`dask scheduler` (see the README)") from None
    with dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES,
                          "distributed.worker.daemon": False, "distributed.logging.distributed": "error"}):
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                               silence_logs=40)
    return Client(cluster), cluster


def _run_dask(jobs, workers, scheduler, on_start, on_done) -> list[Execution]:
    from distributed import as_completed

    client, cluster = _cluster(workers, scheduler)
    try:
        per_host = _threads_by_host(client)
        threads = min(per_host.values())   # a task may land on any host: the smallest share keeps every host capped
        futures = {}
        for i, job in enumerate(jobs):   # the scheduler decides when each starts: on_start is not called here
            job = Job(**{**job.__dict__, "threads": min(job.threads, threads)})
            futures[client.submit(run_on_worker, job, key=f"notebook-{i}-{job.key[:16]}", pure=False)] = (i, job)
        workers_now = len(client.scheduler_info(n_workers=-1)["workers"])
        print(f"  submitted {len(jobs)} notebook run{'s' if len(jobs) > 1 else ''} to the Dask cluster "
              f"({workers_now} worker{'s' if workers_now > 1 else ''}, {threads} thread{'s' if threads > 1 else ''} "
              "a task)", flush=True)
        results: list[Execution | None] = [None] * len(jobs)
        for future in as_completed(futures):
            i, job = futures[future]
            results[i] = _collect(future, job)
            if on_done:
                on_done(job, results[i])
        return results
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _collect(future, job: Job) -> Execution:
    """The task's result as an `Execution`, its notebook written to `job.output`; a lost task as a failed one."""
    from distributed import KilledWorker

    try:
        with stopwatch() as watch:
            out = future.result()
    except KilledWorker as err:
        return Execution(status="failed", seconds=0.0, error=(
            f"the Dask worker running it died, and so did the one it was retried on ({ALLOWED_FAILURES} retry): "
            f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"))
    except Exception as err:  # the task could not run at all (worker import error, lost connection)
        return Execution(status="failed", seconds=round(watch.seconds, 2),
                         error=f"the Dask task failed: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}")
    if out["notebook"] is not None:
        job.output.parent.mkdir(parents=True, exist_ok=True)
        job.output.write_bytes(out["notebook"])
    return Execution(status=out["status"], seconds=out["seconds"], error=out["error"], claims=out["claims"],
                     note=out.get("note", ""))


__all__ = ["EXECUTORS", "Job", "run_jobs", "run_on_worker"]
