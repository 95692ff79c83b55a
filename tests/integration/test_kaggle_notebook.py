"""The Kaggle notebook, executed as Kaggle runs it, on this machine's CPU (issue 47).

The attachments are laid out as Kaggle lays them out, in a temporary directory the notebook reads through its
``DOCGEMMA_KAGGLE_*`` settings (Kaggle's paths by default): the code dataset at ``input/<dataset-slug>/`` as the
archive of ``scripts/kaggle_bundle.py`` unpacks, MedGemma's Kaggle Models directory at
``input/medgemma/transformers/medgemma-1.5-4b-it/1/`` (a stand-in: a ``config.json``; with no GPU the notebook runs the
embedded CPU model, ``ALLOW_CPU``), Kaggle's secrets client stubbed (every request logged), the install step resolved
with ``--dry-run --no-index`` against what is installed, no share link. The app cell starts a real server on loopback
and answers one turn through the app's workspace before anything else runs; it refuses the page without the printed
login. The evaluations, asked for, stop the app first (no second GPU here): no judge's turn shares the model.

Also: each step run alone after the settings names the step to run first (never a ``NameError``); a missing
attachment or GPU stops its step with one sentence; the newer ``input/datasets/<owner>/<slug>/`` layout and an
archive Kaggle left packed are found too.
"""

from __future__ import annotations

import json
import socket
import sys
import urllib.error
import urllib.parse
import urllib.request
import zipfile
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
import pathlib

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

sys.path.insert(0, str(ROOT / "scripts"))
try:
    import kaggle_bundle
finally:
    sys.path.pop(0)


def kaggle_layout(tmp: Path, *, dataset: str = "legacy", medgemma: bool = True) -> Path:
    """``tmp/kaggle`` as a pushed kernel sees it: ``input/`` with the code dataset and MedGemma, empty ``working/``.

    ``dataset``: ``legacy`` (``input/<slug>/``, the archive unpacked), ``datasets`` (``input/datasets/<owner>/<slug>/``),
    ``packed`` (the archive left as uploaded), ``none``."""
    kaggle = tmp / "kaggle"
    (kaggle / "working").mkdir(parents=True)
    slug = kaggle_bundle.DATASET_SLUG
    where = {"legacy": kaggle / "input" / slug, "packed": kaggle / "input" / slug,
             "datasets": kaggle / "input" / "datasets" / kaggle_bundle.DEFAULT_OWNER / slug}.get(dataset)
    if where is not None:
        where.mkdir(parents=True)
        archive = where / kaggle_bundle.ARCHIVE
        kaggle_bundle.write_archive(archive)
        if dataset != "packed":
            with zipfile.ZipFile(archive) as packed:
                packed.extractall(where)
            archive.unlink()
    if medgemma:
        _owner, model, framework, variation, version = kaggle_bundle.MEDGEMMA_SOURCE.split("/")
        model_dir = kaggle / "input" / model / framework / variation / version
        model_dir.mkdir(parents=True)
        (model_dir / "config.json").write_text("{}")
    return kaggle


@pytest.fixture
def kaggle_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The environment the notebook's kernel inherits: Kaggle's paths moved under ``tmp_path``, stubs first on the
    path, no GPU (CPU demo model allowed), an offline hub, small evaluations."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("nbclient")
    if torch.cuda.is_available():
        pytest.skip("CUDA present: the notebook would load MedGemma, not the embedded model")
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    (stubs / "kaggle_secrets.py").write_text(STUB.format(secrets=json.dumps({}), log=str(tmp_path / "secrets.log")))
    settings = {"INPUT": str(tmp_path / "kaggle" / "input"), "WORKING": str(tmp_path / "kaggle" / "working"),
                "GPUS": "", "ALLOW_CPU": "1", "SHARE": "0", "PIP_ARGS": "--dry-run --no-index", "EVALUATIONS": "1",
                "LIMIT": "1", "VARIANTS": "full_desc_1shot,rule", "GOLDEN_FILE": "golden_tests/page_examples.json"}
    for name, value in settings.items():
        monkeypatch.setenv(f"DOCGEMMA_KAGGLE_{name}", value)
    monkeypatch.setenv("PYTHONPATH", str(stubs))
    monkeypatch.setenv("DOCGEMMA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("GRADIO_SERVER_PORT", str(PORT))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in ("DOCGEMMA_MODEL", "HF_TOKEN", "DOCGEMMA_BACKEND", "DOCGEMMA_AUTH", "CUDA_VISIBLE_DEVICES",
                 "KAGGLE_KERNEL_RUN_TYPE"):
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


def one_sentence(value: str) -> bool:
    """A single sentence: one final full stop, no line break."""
    return "\n" not in value and value.endswith(".") and ". " not in value.rstrip(".")


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def login_required(port: int, login: tuple[str, str]) -> None:
    """Served as the app serves everywhere (``ui/server.launch_options``): the probes open, the app's config and
    a route Gradio's own login leaves open (``/gradio_api/cancel``, closed by the login gate) refused without a
    login; the config served after one."""
    base = f"http://127.0.0.1:{port}"
    with urllib.request.urlopen(f"{base}/healthz", timeout=10) as probe:
        assert probe.status == 200
    for path, data in (("/config", None), ("/gradio_api/cancel", b"{}")):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(urllib.request.Request(f"{base}{path}", data=data), timeout=10)
        assert refused.value.code == 401, path
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    wrong = urllib.parse.urlencode({"username": login[0], "password": "guess"}).encode()
    with pytest.raises(urllib.error.HTTPError):
        opener.open(f"{base}/login", data=wrong, timeout=10)
    right = urllib.parse.urlencode({"username": login[0], "password": login[1]}).encode()
    assert opener.open(f"{base}/login", data=right, timeout=10).status == 200
    assert opener.open(f"{base}/config", timeout=10).status == 200


def test_run_all_serves_the_app_first_then_evaluates_without_it(kaggle_env: Path) -> None:
    import nbformat

    kaggle = kaggle_layout(kaggle_env)
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    cells = code_cells(notebook)
    (app,) = [c for c in cells if "launch_in_background(" in c.source]
    assert cells.index(app) == 3  # settings, code, install, then the app: before any evaluation
    runner = client(notebook, kaggle / "working")
    with runner.setup_kernel():
        for index, cell in enumerate(list(notebook.cells)):
            runner.execute_cell(cell, index)  # raises on the first error, naming the cell
            if cell is app:  # the app answers before anything after it runs
                app_output = text_of(app)
                assert "Login: user 'clinician', password '" in app_output
                password = app_output.split("password '")[1].split("'")[0]
                assert len(password) >= 16
                login_required(PORT, ("clinician", password))
                assert "Grace Mensah" in app_output.split("password '")[1]  # the check turn's answer
                check = nbformat.v4.new_code_cell("print(type(FIRST_TURN).__name__, FIRST_TURN.answer[:200])")
                notebook.cells.append(check)
                runner.execute_cell(check, len(notebook.cells) - 1)
                assert text_of(check).startswith("TurnResult ")
        assert not listening(PORT)  # the evaluations stopped the app before using its model (no second GPU)
    outputs = [text_of(c) for c in cells]
    assert "No GPU" in outputs[0] or "GPUs: none" in outputs[0]
    assert f"{kaggle_bundle.DATASET_SLUG}/docgemma-connect" in outputs[1]
    assert (kaggle / "working" / "docgemma" / "docgemma" / "__init__.py").is_file()
    assert "installed in" in outputs[2]
    assert "No GPU: the 135M CPU demo model stands in" in outputs[3]
    assert not (kaggle_env / "secrets.log").exists()  # MedGemma attached: no token asked for
    evaluations = outputs[4]
    assert "The app is stopped while the evaluations use its model" in evaluations
    golden = len(list((ROOT / "golden_tests").glob("*.json")))
    assert "FAIL" not in evaluations and evaluations.count("PASS") == golden
    assert (kaggle / "working" / "docgemma" / "golden_model.jsonl").read_text().strip()
    assert (kaggle / "working" / "docgemma" / "experiments_out" / "tool_select" / "report.md").exists()
    assert "Walkthrough not recorded" in outputs[5]


def test_each_step_alone_says_what_to_run_first(kaggle_env: Path) -> None:
    """A skipped cell: every step run with only the settings before it does its work or names the step to
    run first; none fails with a NameError."""
    import nbformat

    kaggle = kaggle_layout(kaggle_env)
    settings, *steps = code_cells(nbformat.read(NOTEBOOK, as_version=4))
    # One kernel: for each step, a clean namespace, the settings, then the step alone.
    runs = [[nbformat.v4.new_code_cell("%reset -f"), nbformat.v4.new_code_cell(settings.source), step] for step in steps]
    scratch = nbformat.v4.new_notebook(cells=[cell for run in runs for cell in run])
    runner = client(scratch, kaggle / "working", allow_errors=True)
    said: dict[int, str] = {}
    with runner.setup_kernel():
        for index, cell in enumerate(scratch.cells):
            runner.execute_cell(cell, index)
        for number, (_, _, step) in enumerate(runs, 2):
            for name, value in errors(step):
                assert name != "NameError", (number, value)
                assert name == "SystemExit" and "first" in value and one_sentence(value), (number, name, value)
            said[number] = text_of(step)
    assert "project attached at" in said[2]  # needs only the settings
    assert all("Run step 2 (the project) first." in said[n] for n in (3, 4, 5))
    assert "Walkthrough not recorded" in said[6]


def test_what_is_missing_is_said_in_one_sentence(kaggle_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No code dataset: step 2 says so; no GPU (CPU not allowed), or a P100: the app step says what to choose."""
    import nbformat

    monkeypatch.setenv("DOCGEMMA_KAGGLE_ALLOW_CPU", "0")
    kaggle = kaggle_layout(kaggle_env, dataset="none")
    settings, project, _install, app, *_ = code_cells(nbformat.read(NOTEBOOK, as_version=4))
    done = kaggle / "working" / "docgemma"
    # step 2 without the dataset; then the project put in place by hand, and the app step without a GPU
    place = nbformat.v4.new_code_cell(
        f"import shutil; shutil.copytree({str(ROOT / 'docgemma')!r}, {str(done / 'docgemma')!r}, "
        f"ignore=shutil.ignore_patterns('__pycache__')); shutil.copy({str(ROOT / 'requirements.txt')!r}, {str(done)!r})")
    # then a P100 as Kaggle's torch sees it (CUDA there, no sm_60 kernels), torch's queries faked
    p100 = nbformat.v4.new_code_cell(
        "import torch\n"
        "torch.cuda.is_available = lambda: True\n"
        "torch.cuda.get_device_name = lambda *a: 'Tesla P100-PCIE-16GB'\n"
        "torch.cuda.get_device_capability = lambda *a: (6, 0)\n"
        "torch.cuda.get_arch_list = lambda: ['sm_75', 'sm_80', 'sm_86', 'sm_90', 'compute_90']")
    on_p100 = nbformat.v4.new_code_cell(app.source)
    scratch = nbformat.v4.new_notebook(cells=[settings, nbformat.v4.new_code_cell(project.source), place, project, app,
                                              p100, on_p100])
    runner = client(scratch, kaggle / "working", allow_errors=True)
    with runner.setup_kernel():
        for index, cell in enumerate(scratch.cells):
            runner.execute_cell(cell, index)
    ((name, missing),) = errors(scratch.cells[1])
    assert name == "SystemExit" and one_sentence(missing) and kaggle_bundle.DATASET_SLUG in missing
    assert "kernel-metadata.json" in missing
    ((name, no_gpu),) = errors(app)
    assert name == "SystemExit" and one_sentence(no_gpu) and "GPU T4 x2" in no_gpu
    ((name, refused),) = errors(on_p100)
    assert name == "SystemExit" and one_sentence(refused), refused
    assert refused.startswith("The Tesla P100-PCIE-16GB is not supported by Kaggle's torch (no sm_60 kernels)")
    assert "Tesla P100-PCIE-16GB (compute capability 6.0)" in text_of(on_p100)


@pytest.mark.parametrize("dataset", ["datasets", "packed"])
def test_the_code_is_found_in_kaggles_other_layouts(kaggle_env: Path, dataset: str) -> None:
    import nbformat

    kaggle = kaggle_layout(kaggle_env, dataset=dataset, medgemma=False)
    settings, project, *_ = code_cells(nbformat.read(NOTEBOOK, as_version=4))
    scratch = nbformat.v4.new_notebook(cells=[settings, project])
    runner = client(scratch, kaggle / "working")
    with runner.setup_kernel():
        for index, cell in enumerate(scratch.cells):
            runner.execute_cell(cell, index)
    assert "project attached at" in text_of(project)
    assert (kaggle / "working" / "docgemma" / "docgemma" / "__init__.py").is_file()


def test_with_a_second_gpu_the_evaluations_run_there_and_the_app_keeps_serving(
        kaggle_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kaggle's T4 x2, as far as a CPU machine can play it: the first GPU pinned for the app's kernel, the evaluations
    in ``python -m docgemma`` processes pinned to the second (here they load the CPU demo model), the app still
    serving afterwards. (No MedGemma stand-in: its empty directory would be handed to those processes.)"""
    import nbformat

    monkeypatch.setenv("DOCGEMMA_KAGGLE_GPUS", "0,1")
    monkeypatch.setenv("DOCGEMMA_KAGGLE_VARIANTS", "rule")  # the first test asks the model; here only the routing
    kaggle = kaggle_layout(kaggle_env, medgemma=False)
    settings, project, install, app, evaluations, _walkthrough = code_cells(nbformat.read(NOTEBOOK, as_version=4))
    probe = nbformat.v4.new_code_cell("print(os.environ['CUDA_VISIBLE_DEVICES'], SPARE_GPU)")
    scratch = nbformat.v4.new_notebook(cells=[settings, probe, project, install, app, evaluations])
    runner = client(scratch, kaggle / "working")
    with runner.setup_kernel():
        for index, cell in enumerate(scratch.cells):
            runner.execute_cell(cell, index)
        assert listening(PORT)  # the app was not stopped
        password = text_of(app).split("password '")[1].split("'")[0]
        login_required(PORT, ("clinician", password))
        scratch.cells.append(nbformat.v4.new_code_cell("APP.demo.close()"))
        runner.execute_cell(scratch.cells[-1], len(scratch.cells) - 1)
    assert text_of(probe).split() == ["0", "1"]
    said = text_of(evaluations)
    assert "on GPU 1 (its own MedGemma); the app keeps serving on GPU 0" in said and "stopped" not in said
    work = kaggle / "working" / "docgemma"
    assert (work / "golden_model.jsonl").read_text().strip()
    assert (work / "experiments_out" / "tool_select" / "report.md").exists()
