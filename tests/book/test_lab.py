"""`make lab`: JupyterLab from the lock opens a chapter's .md as a notebook (jupytext, lab/overrides.json) whose
kernel imports repro, parameters cell first. Started headless on a free localhost port, looked at in Chromium."""
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from bs4 import BeautifulSoup

from conftest import BUILD, ROOT, chromium

CHAPTER = "chapters/specgd/01_theory.md"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str):
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on a copy of one chapter (so that nothing it saves touches the book), as `make lab`
    starts it, plus what a test run needs: no token, root allowed, settings and runtime files in a temporary folder."""
    home = tmp_path_factory.mktemp("lab")
    (home / "book" / CHAPTER).parent.mkdir(parents=True)
    shutil.copy(ROOT / CHAPTER, home / "book" / CHAPTER)
    port = _free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_RUNTIME_DIR": str(home / "runtime")}
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", f"--ServerApp.root_dir={home / 'book'}", "--IdentityProvider.token=",
           "--ServerApp.password=", f"--LabApp.app_settings_dir={ROOT / 'lab'}",
           f"--LabApp.user_settings_dir={home / 'settings'}", f"--LabApp.workspaces_dir={home / 'workspaces'}"]
    log = open(home / "lab.log", "w")
    server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                _get(url + "/api")
                break
            except OSError:
                if server.poll() is not None:
                    break
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not answer within 60 s: " + (home / "lab.log").read_text()[-800:])
        if server.poll() is not None:
            pytest.fail("JupyterLab exited: " + (home / "lab.log").read_text()[-800:])
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def test_the_kernel_of_the_lab_imports_repro(lab):
    """The lab's default kernel, started as the lab starts it (jupyter_client), imports the book's library."""
    from jupyter_client.manager import start_new_kernel

    default = _get(lab + "/api/kernelspecs")["default"]
    manager, client = start_new_kernel(kernel_name=default)
    try:
        out = []
        reply = client.execute_interactive("import repro.book; print(repro.book.__name__)", timeout=120,
                                           output_hook=lambda msg: out.append(msg["content"].get("text", "")))
        assert reply["content"]["status"] == "ok", f"the lab's kernel cannot import repro: {reply['content']}"
        assert "repro.book" in "".join(out)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_a_chapter_opens_as_a_notebook_with_its_parameters_cell_first(lab):
    page = f"{lab}/lab/tree/{CHAPTER}"
    shot = BUILD / "lab-screenshot.png"
    BUILD.mkdir(exist_ok=True)
    base = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--window-size=1400,1000",
            "--user-data-dir=/tmp/repro-chromium-lab", "--virtual-time-budget=30000"]
    subprocess.run(base + [f"--screenshot={shot}", page], capture_output=True, timeout=180)
    dom = subprocess.run(base + ["--dump-dom", page], capture_output=True, text=True, timeout=180).stdout
    soup = BeautifulSoup(dom, "html.parser")
    assert soup.select(".jp-Notebook"), f"{CHAPTER} did not open as a notebook (see {shot.relative_to(ROOT)})"
    code = soup.select(".jp-Notebook .jp-CodeCell")
    assert len(code) >= 3, f"the notebook shows {len(code)} code cells (see {shot.relative_to(ROOT)})"
    first = " ".join(code[0].select_one(".jp-InputArea-editor").get_text(" ").split())
    assert 'scale = "ci"' in first, f"the first code cell is not the parameters cell: {first!r}"
