"""Every notebook runs top to bottom on the embedded CPU model, and the committed notebooks are
exactly what ``scripts/build_notebooks.py`` builds, with no outputs.

CI cost: each notebook loads the embedded model once (~30 s) and runs one case of one or two variants; the
demo notebook answers drug look-ups from recorded API responses on loopback (no live call).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: Per suite notebook: the agent's own variant and the rule (or a rejected variant), one case each.
CI_VARIANTS = {
    "01_tool_select": "full_desc_1shot,rule",
    "02_intent_classify": "project,rule",
    "03_stage2_args": "with_hints,rule",
    "04_result_classify": "project,rule",
    "05_retry_strategy": "project,always_retry_same",
    "06_anti_patterns": "model,rule",
    "07_synthesize": "t0.5_256",
}


def test_committed_notebooks_match_the_builder_and_have_no_outputs() -> None:
    pytest.importorskip("nbformat")
    done = subprocess.run([sys.executable, "scripts/build_notebooks.py", "--check"], cwd=ROOT, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert {p.stem for p in NOTEBOOKS} >= {*CI_VARIANTS, "00_demo_patient_session"}
    for path in [*NOTEBOOKS, ROOT / "kaggle_submission" / "docgemma_kaggle.ipynb"]:
        cells = json.loads(path.read_text())["cells"]
        assert all(not c.get("outputs") and not c.get("execution_count") for c in cells if c["cell_type"] == "code")


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_on_the_embedded_model(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("CUDA present: the transformers backend would load MedGemma, not the embedded model")
    monkeypatch.setenv("DOCGEMMA_NB_BACKEND", "transformers")
    monkeypatch.setenv("DOCGEMMA_NB_LIMIT", "1")
    monkeypatch.setenv("DOCGEMMA_NB_VARIANTS", CI_VARIANTS.get(path.stem, ""))
    monkeypatch.setenv("DOCGEMMA_NB_OUT", str(tmp_path / "out"))
    monkeypatch.setenv("DOCGEMMA_NB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DOCGEMMA_NB_RECORDED_APIS", "1")
    notebook = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    if path.stem in CI_VARIANTS:
        suite = path.stem[3:]
        out = tmp_path / "out" / suite
        assert (out / "report.md").exists() and (out / f"{suite}_accuracy.png").exists()
        assert (out / "calls.jsonl").read_text().strip()
    else:
        assert any("image/png" in o.get("data", {}) for o in outputs)
