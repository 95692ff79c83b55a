"""The Kaggle notebook, executed as Kaggle would run it, on this machine's embedded CPU model.

A simulated ``/kaggle`` in a temporary directory (``DOCGEMMA_KAGGLE_TEST_ROOT``, honoured by the notebook's
first cell only for tests): the project attached as a dataset three levels deep under ``input/``, Kaggle's
secrets client stubbed (``kaggle_secrets``), small limits, no share link, the install step resolved with
``--dry-run --no-index`` against what is installed. The app step starts a real server on loopback: it must
refuse the page without the printed login.

Also: each step run alone after the settings (as when a cell is skipped) ends with "Run step N … first" or
does its work, never a ``NameError``; with MedGemma attached from Kaggle Models no token is asked for.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixture_api import serve

pytestmark = pytest.mark.slow
ROOT = Path(__file__).parents[2]
NOTEBOOK = ROOT / "kaggle_submission" / "docgemma_kaggle.ipynb"
PORT = 7841
STUB = '''"""Kaggle's secrets client, stubbed for tests: answers from a dict; every request is logged."""
import json, os, pathlib

SECRETS = {secrets}
LOG = pathlib.Path({log!r})


class UserSecretsClient:
    def get_secret(self, label):
        with LOG.open("a") as out:
            out.write(label + "\\n")
        if label not in SECRETS:
            raise Exception(f"no secret {{label}} attached")  # what Kaggle's client raises
        return SECRETS[label]
'''


def project_copy(target: Path) -> None:
    """The repository's files as a dataset would hold them (tracked and new files, not ignored ones)."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def kaggle_layout(tmp: Path, secrets: dict[str, str], *, medgemma: bool = False) -> Path:
    """``tmp/kaggle`` with the project attached deep under input/, an empty working/, and the secrets stub."""
    kaggle = tmp / "kaggle"
    project_copy(kaggle / "input" / "docgemma-connect" / "version-3" / "docgemma-connect-main")
    (kaggle / "working").mkdir(parents=True)
    if medgemma:
        model = kaggle / "input" / "medgemma" / "transformers" / "medgemma-1.5-4b-it" / "1"
        model.mkdir(parents=True)
        (model / "config.json").write_text("{}")
    stubs = tmp / "stubs"
    stubs.mkdir()
    (stubs / "kaggle_secrets.py").write_text(STUB.format(secrets=json.dumps(secrets), log=str(tmp / "secrets.log")))
    return kaggle


@pytest.fixture
def kaggle_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The environment the notebook's kernel inherits: test root, stubs first on the path, offline hub."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("nbclient")
    if torch.cuda.is_available():
        pytest.skip("CUDA present: the notebook would load MedGemma, not the embedded model")
    monkeypatch.setenv("DOCGEMMA_KAGGLE_TEST_ROOT", str(tmp_path / "kaggle"))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "stubs"))
    monkeypatch.setenv("DOCGEMMA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("GRADIO_SERVER_PORT", str(PORT))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in ("DOCGEMMA_MODEL", "HF_TOKEN", "DOCGEMMA_BACKEND", "DOCGEMMA_AUTH"):
        monkeypatch.delenv(name, raising=False)
    with serve() as base:  # the app's connectivity probe and any knowledge tool: recorded responses on loopback
        for name in ("OPENFDA", "EUTILS", "EUROPEPMC", "CTGOV"):
            monkeypatch.setenv(f"DOCGEMMA_{name}_URL", base)
        yield tmp_path


def client(notebook: Any, cwd: Path, allow_errors: bool = False) -> Any:
    import nbclient

    return nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3", allow_errors=allow_errors,
                                   resources={"metadata": {"path": str(cwd)}})


def code_cells(notebook: Any) -> list[Any]:
    return [c for c in notebook.cells if c.cell_type == "code"]


def text_of(cell: Any) -> str:
    parts = []
    for out in cell.get("outputs", []):
        parts.append(out.get("text", "") + "".join(out.get("data", {}).get("text/plain", "")))
        if out.get("output_type") == "error":
            parts.append(f"{out['ename']}: {out['evalue']}")
    return "".join(parts)


def errors(cell: Any) -> list[tuple[str, str]]:
    return [(o["ename"], o["evalue"]) for o in cell.get("outputs", []) if o.get("output_type") == "error"]


def login_required(port: int, login: tuple[str, str]) -> None:
    """Gradio's auth: the app's config is refused without a login, served after one."""
    base = f"http://127.0.0.1:{port}"
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{base}/config", timeout=10)
    assert refused.value.code == 401
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    wrong = urllib.parse.urlencode({"username": login[0], "password": "guess"}).encode()
    with pytest.raises(urllib.error.HTTPError):
        opener.open(f"{base}/login", data=wrong, timeout=10)
    right = urllib.parse.urlencode({"username": login[0], "password": login[1]}).encode()
    assert opener.open(f"{base}/login", data=right, timeout=10).status == 200
    assert opener.open(f"{base}/config", timeout=10).status == 200


def test_kaggle_notebook_runs_top_to_bottom(kaggle_env: Path) -> None:
    import nbformat

    kaggle = kaggle_layout(kaggle_env, {"HF_TOKEN": "hf_test_token"})
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    runner = client(notebook, kaggle / "working")
    with runner.setup_kernel():
        for index, cell in enumerate(notebook.cells):
            runner.execute_cell(cell, index)  # raises on the first error, naming the cell
        cells = code_cells(notebook)
        (app,) = [c for c in cells if "demo.launch(" in c.source]
        assert cells.index(app) == 6  # step 7, right after the model loads: before any evaluation (issue 28)
        app_output = text_of(app)
        assert "Login: user 'clinician', password '" in app_output
        password = app_output.split("password '")[1].split("'")[0]
        assert len(password) >= 16
        login_required(PORT, ("clinician", password))
        notebook.cells.append(nbformat.v4.new_code_cell("demo.close()"))
        runner.execute_cell(notebook.cells[-1], len(notebook.cells) - 1)
    outputs = {i: text_of(c) for i, c in enumerate(cells)}
    assert "docgemma-connect-main" in outputs[1]  # found three levels deep
    assert (kaggle / "working" / "docgemma" / "docgemma" / "__init__.py").is_file()
    assert "No GPU" in outputs[3]
    assert "with the HF_TOKEN secret" in outputs[4] and (kaggle_env / "secrets.log").read_text() == "HF_TOKEN\n"
    assert "JSON constraints ready" in outputs[5]
    assert "FAIL" not in outputs[7] and outputs[7].count("PASS") == len(list((ROOT / "golden_tests").glob("*.json")))
    assert (kaggle / "working" / "docgemma" / "golden_model.jsonl").read_text().strip()
    assert (kaggle / "working" / "docgemma" / "experiments_out" / "tool_select" / "report.md").exists()


def test_each_step_alone_says_what_to_run_first(kaggle_env: Path) -> None:
    """A skipped cell: every step run with only the settings before it does its work or names the step to
    run first; none fails with a NameError."""
    import nbformat

    kaggle = kaggle_layout(kaggle_env, {})
    settings, *steps = code_cells(nbformat.read(NOTEBOOK, as_version=4))
    # One kernel: for each step, a clean namespace, the settings, then the step alone.
    runs = [[nbformat.v4.new_code_cell("%reset -f"), copy.deepcopy(settings), step] for step in steps]
    scratch = nbformat.v4.new_notebook(cells=[cell for run in runs for cell in run])
    runner = client(scratch, kaggle / "working", allow_errors=True)
    said: dict[int, str] = {}
    with runner.setup_kernel():
        for index, cell in enumerate(scratch.cells):
            runner.execute_cell(cell, index)
        for number, (_, _, step) in enumerate(runs, 2):
            for name, value in errors(step):
                assert name != "NameError", (number, value)
                assert name == "SystemExit" and "first" in value, (number, name, value)
            said[number] = text_of(step)
    assert "project attached at" in said[2]  # needs only the settings
    assert all("Run step 2 (the project) first" in said[n] for n in (3, 4, 5, 6, 7, 8))
    assert all("Run step 6 (load MedGemma) first" in said[n] for n in (9, 10))


def test_medgemma_from_kaggle_models_needs_no_token(kaggle_env: Path) -> None:
    import nbformat

    kaggle = kaggle_layout(kaggle_env, {}, medgemma=True)  # no secret: asking for one would be logged
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    settings, project, _install, _gpu, source, *_ = code_cells(notebook)
    scratch = nbformat.v4.new_notebook(cells=[settings, project, source])
    runner = client(scratch, kaggle / "working")
    with runner.setup_kernel():
        for index, cell in enumerate(scratch.cells):
            runner.execute_cell(cell, index)
    assert "MedGemma from Kaggle Models" in text_of(source) and "no Hugging Face token needed" in text_of(source)
    assert "medgemma-1.5-4b-it" in text_of(source)
    assert not (kaggle_env / "secrets.log").exists()
