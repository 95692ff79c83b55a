"""Issue 47: what `kaggle kernels push` and `kaggle datasets create` need, built by scripts/kaggle_bundle.py and
checked against Kaggle's documented metadata fields (Kaggle/kaggle-api docs/kernels_metadata.md and
docs/datasets_metadata.md), and what the notebook finds where Kaggle mounts it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parents[2]
SUBMISSION = ROOT / "kaggle_submission"
sys.path.insert(0, str(ROOT / "scripts"))
try:
    import kaggle_bundle
finally:
    sys.path.pop(0)

#: docs/kernels_metadata.md's fields; ``enable_tpu`` and ``machine_shape`` are what the client writes on
#: ``kaggle kernels pull -m`` (kaggle-api PR 856) and reads on push, not yet in that page.
KERNEL_FIELDS = {"id", "id_no", "title", "code_file", "language", "kernel_type", "is_private", "enable_gpu",
                 "enable_internet", "dataset_sources", "competition_sources", "kernel_sources", "model_sources",
                 "enable_tpu", "machine_shape"}
KERNEL_REQUIRED = {"id", "title", "code_file", "language", "kernel_type"}
DATASET_FIELDS = {"title", "subtitle", "description", "id", "id_no", "licenses", "resources", "keywords"}
#: docs/datasets_metadata.md's license names.
LICENSES = {"CC0-1.0", "CC-BY-SA-3.0", "CC-BY-SA-4.0", "CC-BY-NC-SA-4.0", "GPL-2.0", "ODbL-1.0", "DbCL-1.0",
            "copyright-authors", "other", "unknown", "CC-BY-4.0", "CC-BY-NC-4.0", "PDDL", "CC-BY-3.0",
            "CC-BY-3.0-IGO", "US-Government-Works", "CC-BY-NC-SA-3.0-IGO", "CDLA-Permissive-1.0", "CDLA-Sharing-1.0",
            "CC-BY-ND-4.0", "CC-BY-NC-ND-4.0", "ODC-BY-1.0", "LGPL-3.0", "AGPL-3.0", "FDL-1.3", "EU-ODP-Legal-Notice",
            "apache-2.0", "GPL-3.0"}
SLUG = r"[a-z0-9][a-z0-9-]*[a-z0-9]"
BOOL = {"true", "false"}


def load(name: str) -> dict[str, Any]:
    return dict(json.loads((SUBMISSION / name).read_text()))


def check_kernel(meta: dict[str, Any], folder: Path) -> None:
    assert set(meta) <= KERNEL_FIELDS and set(meta) >= KERNEL_REQUIRED, set(meta) ^ KERNEL_FIELDS
    owner, slug = meta["id"].split("/")
    assert re.fullmatch(SLUG, owner) and re.fullmatch(SLUG, slug)
    assert slug == meta["title"].lower().replace(" ", "-")  # Kaggle derives the slug from the title
    assert (folder / meta["code_file"]).is_file() and meta["code_file"].endswith(".ipynb")
    assert meta["language"] == "python" and meta["kernel_type"] == "notebook"
    assert {meta[k] for k in ("is_private", "enable_gpu", "enable_tpu", "enable_internet")} <= BOOL
    assert meta["enable_gpu"] == "true" and meta["enable_internet"] == "true" and meta["enable_tpu"] == "false"
    assert meta["machine_shape"] == "NvidiaTeslaT4"  # two T4s; never a P100
    assert all(re.fullmatch(f"{SLUG}/{SLUG}", source) for source in meta["dataset_sources"])
    assert meta["dataset_sources"] == [f"{owner}/{kaggle_bundle.DATASET_SLUG}"]
    # username/model-slug/framework/variation-slug/version-number
    (model,) = meta["model_sources"]
    assert re.fullmatch(r"google/medgemma/transformers/[a-z0-9.-]+/\d+", model)
    assert meta["competition_sources"] == [] and meta["kernel_sources"] == []


def check_dataset(meta: dict[str, Any], owner: str) -> None:
    assert set(meta) <= DATASET_FIELDS and {"title", "id", "licenses"} <= set(meta)
    assert 6 <= len(meta["title"]) <= 50 and 20 <= len(meta["subtitle"]) <= 80
    assert meta["id"] == f"{owner}/{kaggle_bundle.DATASET_SLUG}"
    assert 3 <= len(kaggle_bundle.DATASET_SLUG) <= 50 and re.fullmatch(SLUG, kaggle_bundle.DATASET_SLUG)
    (license_,) = meta["licenses"]
    assert license_["name"] in LICENSES


def test_committed_metadata_is_what_the_script_builds() -> None:
    done = subprocess.run([sys.executable, "scripts/kaggle_bundle.py", "--check"], cwd=ROOT, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_committed_metadata_has_only_kaggles_documented_fields() -> None:
    kernel = load("kernel-metadata.json")
    check_kernel(kernel, SUBMISSION)
    check_dataset(load("dataset-metadata.json"), kernel["id"].split("/")[0])


def test_the_upload_folders_for_another_owner(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "scripts/kaggle_bundle.py", "--owner", "someone-else", "--out",
                           str(tmp_path)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "kaggle kernels push -p" in done.stdout and "kaggle datasets create -p" in done.stdout
    kernel = json.loads((tmp_path / "kernel" / "kernel-metadata.json").read_text())
    check_kernel(kernel, tmp_path / "kernel")
    assert kernel["id"] == "someone-else/docgemma-connect"
    check_dataset(json.loads((tmp_path / "dataset" / "dataset-metadata.json").read_text()), "someone-else")
    assert sorted(p.name for p in (tmp_path / "dataset").iterdir()) == ["dataset-metadata.json", kaggle_bundle.ARCHIVE]
    with zipfile.ZipFile(tmp_path / "dataset" / kaggle_bundle.ARCHIVE) as archive:
        names = set(archive.namelist())
    assert {"docgemma-connect/docgemma/__init__.py", "docgemma-connect/requirements.txt",
            "docgemma-connect/constraints.txt", "docgemma-connect/golden_tests/clinical_sessions.json"} <= names
    assert not [n for n in names if n.endswith(kaggle_bundle.LEFT_OUT) or "/.git/" in n or "__pycache__" in n]
    assert (tmp_path / "kernel" / "docgemma_kaggle.ipynb").read_bytes() == (SUBMISSION / "docgemma_kaggle.ipynb").read_bytes()


def test_the_notebook_looks_where_the_metadata_mounts() -> None:
    """The settings cell's dataset slug is the bundle's, and its Kaggle defaults are Kaggle's paths."""
    cells = ["".join(c["source"]) for c in json.loads((SUBMISSION / "docgemma_kaggle.ipynb").read_text())["cells"]
             if c["cell_type"] == "code"]
    settings = cells[0]
    assert f'env("DOCGEMMA_KAGGLE_DATASET", "{kaggle_bundle.DATASET_SLUG}")' in settings
    assert 'env("DOCGEMMA_KAGGLE_INPUT", "/kaggle/input")' in settings
    assert 'env("DOCGEMMA_KAGGLE_WORKING", "/kaggle/working")' in settings
    # CUDA_VISIBLE_DEVICES is pinned in the first cell, before any cell imports torch
    assert 'os.environ["CUDA_VISIBLE_DEVICES"] = GPUS[0]' in settings and "torch" not in settings.split("#")[0]
    assert all("import torch" not in cell for cell in cells[:3])


@pytest.mark.parametrize("layout", ["", "models/google/"])
def test_medgemma_is_found_where_the_model_source_mounts(tmp_path: Path, layout: str) -> None:
    from docgemma.llm.transformers_backend import kaggle_model_dir

    _owner, model, framework, variation, version = kaggle_bundle.MEDGEMMA_SOURCE.split("/")
    where = tmp_path / layout / model / framework / variation / version
    where.mkdir(parents=True)
    (where / "config.json").write_text("{}")
    project = tmp_path / kaggle_bundle.DATASET_SLUG / "docgemma-connect" / "docgemma"
    project.mkdir(parents=True)  # the code dataset beside it holds no model
    assert kaggle_model_dir(tmp_path) == where


@pytest.mark.parametrize(("run_type", "evaluations", "share"), [("Batch", True, False), ("Interactive", False, True)])
def test_a_saved_version_runs_the_evaluations_and_an_open_session_waits_for_the_flag(
        tmp_path: Path, run_type: str, evaluations: bool, share: bool) -> None:
    """Kaggle's KAGGLE_KERNEL_RUN_TYPE: in a batch run (Save Version, kaggle kernels push) no one can reach the app,
    so the evaluations run by default and the saved notebook carries their outputs; no share link there."""
    notebook = json.loads((SUBMISSION / "docgemma_kaggle.ipynb").read_text())
    settings = next("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code")
    script = tmp_path / "settings.py"
    script.write_text(settings + "\nprint(RUN_EVALUATIONS, SHARE)\n")
    env = {"PATH": "/usr/bin:/bin", "KAGGLE_KERNEL_RUN_TYPE": run_type, "DOCGEMMA_KAGGLE_GPUS": ""}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.split()[-2:] == [str(evaluations), str(share)]
