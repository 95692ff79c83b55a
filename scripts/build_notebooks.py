"""Build every notebook from this one script, so they stay in step with the code (outputs empty).

    python scripts/build_notebooks.py            # writes notebooks/*.ipynb and kaggle_submission/docgemma_kaggle.ipynb
    python scripts/build_notebooks.py --check    # exits 1 if a committed notebook differs from what this builds

Each suite notebook has a parameter cell (tagged ``parameters`` for papermill) that reads ``DOCGEMMA_NB_*``
environment variables, so CI can run the embedded model on a tiny subset and a GPU run can use every case.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docgemma.eval.experiments.seed002 import REFERENCE  # noqa: E402

PARAMS = '''# Parameters (papermill: this cell is tagged "parameters"; CI sets DOCGEMMA_NB_* instead).
import os
BACKEND = os.environ.get("DOCGEMMA_NB_BACKEND", "transformers")  # transformers: MedGemma on a GPU, the embedded model on CPU
LIMIT = int(os.environ.get("DOCGEMMA_NB_LIMIT", "{limit}"))  # cases per variant (0 = every case)
VARIANTS = os.environ.get("DOCGEMMA_NB_VARIANTS", "")  # comma-separated variant names (empty = all)
OUT = os.environ.get("DOCGEMMA_NB_OUT", "experiments_out")'''

SETUP = '''# Make the repository importable when the notebook runs from notebooks/.
import sys, pathlib
root = next(p for p in [pathlib.Path.cwd(), *pathlib.Path.cwd().parents] if (p / "docgemma").is_dir())
sys.path.insert(0, str(root))
from IPython.display import Image, Markdown, display'''

SUITES = {
    "tool_select": ("TOOL_SELECT: which tool?",
                    "Stage 1 picks one tool from the 13 in the registry. Seed 002 varied the tool descriptions "
                    "(names only / short / full), the number of examples, joint vs two-stage selection, the schema "
                    "order, the analytical prefix, and tried boolean probing and reasoning-then-select. The agent "
                    "keeps full_desc + 1 matched shot + prefix + two stages; the rule row is what code decides "
                    "before any model call."),
    "intent_classify": ("INTENT_CLASSIFY: DIRECT or TOOL_NEEDED?",
                        "Binary intent with a task summary and a non-binding tool hint. `rule` is `rules.decide`, "
                        "which settles most messages in code (coverage = `decided`)."),
    "stage2_args": ("TOOL_SELECT stage 2: the arguments",
                    "Argument extraction for the expected tool, with and without deterministic entity hints, and "
                    "with the schema's optional fields first (seed 002's null cascade). `rule` is `extract.prefill`."),
    "result_classify": ("RESULT_CLASSIFY: how good is the result?",
                        "Five classes. The agent files errors and empty results in code (`rule`) and asks the model "
                        "only rich vs partial."),
    "retry_strategy": ("ERROR_HANDLER: retry the same or differently?",
                       "The one decision the error handler leaves to the model (seed 002: 92%)."),
    "anti_patterns": ("Anti-patterns: why code owns these decisions",
                      "Sufficiency, ask_user, skip and full-plan decomposition, asked of the model the way seed 002 "
                      "tried, next to the project's deterministic rules on the same cases."),
    "synthesize": ("SYNTHESIZE: the answer",
                   "Temperature 0.0-1.0, 256 vs 512 tokens, brief vs structured prompt, raw vs pre-formatted errors, "
                   "thinking prefix; scored by rules (facts present, tool/source-name leakage, answer from memory "
                   "after an error, empty output, length)."),
}


def _seed_table(suite: str) -> str:
    rows = [f"| {' / '.join(k[1:])} | {v} |" for k, v in REFERENCE.items() if k[0] == suite]
    return "| variant | seed 002 (MedGemma 4B) |\n|---|---|\n" + "\n".join(rows)


def suite_notebook(suite: str) -> nbformat.NotebookNode:
    title, text = SUITES[suite]
    params = new_code_cell(PARAMS.format(limit=5))
    params.metadata["tags"] = ["parameters"]
    cells = [
        new_markdown_cell(
            f"# {title}\n\n{text}\n\nSame code as `python -m docgemma experiment {suite} --backend B --limit N`: the "
            "agent's real prompts, schemas and generation settings, one node in isolation, over the labelled cases "
            f"in `docgemma/eval/experiments/data/`.\n\n**Seed 002's figures** (§12-§13):\n\n{_seed_table(suite)}\n\n"
            "On CPU the embedded SmolLM2-135M runs instead of MedGemma: its figures are far lower and only show that "
            "the pipeline runs. Run on a GPU (Kaggle T4, Colab) with `BACKEND = \"transformers\"` and `LIMIT = 0` for "
            "the real comparison."),
        params,
        new_code_cell(SETUP),
        new_code_cell("from docgemma.eval.experiments import notebook\n\nllm = notebook.load_model(BACKEND)\n"
                      "print(llm.name if llm else 'rules only')"),
        new_code_cell(f"result = notebook.run({suite!r}, llm, limit=LIMIT or None,\n"
                      "                      variants=[v for v in VARIANTS.split(',') if v] or None, out=pathlib.Path(OUT))\n"
                      "result.frame"),
        new_markdown_cell("## Plots\n\nAccuracy by variant (red ticks: seed 002's figure on MedGemma 4B), latency, and "
                          "per case where the variants disagree."),
        new_code_cell("for figure in result.figures:\n    display(Image(filename=str(figure)))"),
        new_markdown_cell("## Every call\n\nOne row per trial: the model's output, prompt tokens, latency, right or "
                          "wrong. The same rows are in `calls.jsonl` beside the report."),
        new_code_cell("import pandas as pd\n\ncalls = pd.DataFrame(result.records)\n"
                      "calls[['variant', 'case', 'output', 'correct', 'prompt_tokens', 'latency_s']]"),
        new_code_cell("display(Markdown(f'Report written to `{result.report}`'))"),
    ]
    return new_notebook(cells=cells, metadata=_metadata())


DEMO_PARAMS = '''# Parameters (papermill: tagged "parameters"; CI sets DOCGEMMA_NB_* instead).
import os, tempfile
BACKEND = os.environ.get("DOCGEMMA_NB_BACKEND", "transformers")
# CI answers drug, literature and trial look-ups from recorded API responses (tests/fixtures/apis) on loopback.
RECORDED_APIS = os.environ.get("DOCGEMMA_NB_RECORDED_APIS", "0") == "1"
DATA_DIR = os.environ.get("DOCGEMMA_NB_DATA_DIR") or tempfile.mkdtemp(prefix="docgemma-demo-")'''

DEMO_SHOW = '''from docgemma.agent.assistant import TurnResult
from docgemma.ui.text import render_timeline

session = []  # (turn, node, seconds), for the plot at the end
turn_number = 0

def show(result):
    """The answer, then the reasoning timeline, as the app shows them (or the approval request)."""
    global turn_number
    if not isinstance(result, TurnResult):
        warnings = "".join(f"\\n- WARNING: {w}" for w in result.get("warnings", []))
        display(Markdown(f"**Approval needed**\\n\\n```\\n{result['preview']}\\n```\\n{warnings}"))
        return
    turn_number += 1
    display(Markdown(result.answer))
    print(render_timeline(result))
    session.extend((turn_number, e["node"], e["duration_ms"] / 1000) for e in result.timeline)'''


def demo_notebook() -> nbformat.NotebookNode:
    params = new_code_cell(DEMO_PARAMS)
    params.metadata["tags"] = ["parameters"]
    cells = [
        new_markdown_cell(
            "# DocGemma Connect: a patient session, end to end\n\nOne conversation on the embedded FHIR record "
            "(synthetic demo patients): find a patient, read the chart, check an interaction, propose a "
            "prescription that waits for the clinician's approval, and attach an image. Each turn shows the answer "
            "and the reasoning timeline (which node ran, what it decided, whether a rule or the model decided, "
            "model calls, prompt tokens, time).\n\nOn CPU the embedded SmolLM2-135M stands in for MedGemma: it "
            "writes no medical prose (answers are the retrieved facts rendered by code) and cannot read images. "
            "On a GPU the same cells run MedGemma."),
        params,
        new_code_cell(SETUP),
        new_code_cell(
            "import contextlib, dataclasses\nfrom docgemma.config import Settings\n"
            "from docgemma.runtime import build_assistant, build_ehr\n\n"
            "stack = contextlib.ExitStack()\n"
            "settings = dataclasses.replace(Settings.from_env(), backend=BACKEND, data_dir=pathlib.Path(DATA_DIR))\n"
            "if RECORDED_APIS:\n"
            "    from tests.fixture_api import serve\n"
            "    base = stack.enter_context(serve())\n"
            "    settings = dataclasses.replace(settings, openfda_url=base, eutils_url=base, europepmc_url=base, ctgov_url=base)\n"
            "ehr = build_ehr(settings)\nassistant = build_assistant(settings, ehr)\nprint(assistant.llm.name)"),
        new_code_cell(DEMO_SHOW),
        new_markdown_cell("## 1. Find the patient\n\nA named patient is searched by code (no model call for the "
                          "tool choice); one match becomes the active patient."),
        new_code_cell('THREAD = "demo-session"\nshow(assistant.run_turn(THREAD, "Find patient Grace Mensah"))'),
        new_markdown_cell("## 2. Her chart\n\n\"her\" resolves to the active patient."),
        new_code_cell('show(assistant.run_turn(THREAD, "Show her chart"))'),
        new_markdown_cell("## 3. An interaction check"),
        new_code_cell('show(assistant.run_turn(THREAD, "Check interactions between warfarin and aspirin"))'),
        new_markdown_cell("## 4. A prescription: nothing is written before the clinician decides\n\nThe turn pauses "
                          "with an approval request and the record-based warnings (her penicillin allergy). The "
                          "clinician rejects it: nothing is written."),
        new_code_cell('pending = assistant.run_turn(THREAD, "Prescribe amoxicillin 500 mg three times daily for her")\n'
                      "show(pending)"),
        new_code_cell('show(assistant.resume(THREAD, {"action": "reject"}) if isinstance(pending, dict) else pending)'),
        new_markdown_cell("An alternative, approved: written once, then shown in the record."),
        new_code_cell('pending = assistant.run_turn(THREAD, "Prescribe azithromycin 500 mg once daily for her")\n'
                      "show(pending)"),
        new_code_cell('show(assistant.resume(THREAD, {"action": "approve"}) if isinstance(pending, dict) else pending)'),
        new_markdown_cell("## 5. An image\n\nThe runner's sample image: an anonymised CT slice that ships inside "
                          "pydicom. A text-only model says it cannot read images."),
        new_code_cell('from docgemma.eval.golden import sample_image\n\n'
                      'show(assistant.run_turn(THREAD, "What does this image show?", sample_image()))'),
        new_markdown_cell("## Where the time went\n\nSeconds per node and turn."),
        new_code_cell(
            "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nimport pandas as pd\n\n"
            "frame = pd.DataFrame(session, columns=['turn', 'node', 'seconds'])\n"
            "pivot = frame.pivot_table(index='turn', columns='node', values='seconds', aggfunc='sum').fillna(0)\n"
            "ax = pivot.plot.bar(stacked=True, figsize=(8, 4), rot=0)\nax.set_ylabel('seconds')\n"
            "ax.set_title('time per turn, by node')\nplt.tight_layout()\npath = pathlib.Path(DATA_DIR) / 'demo_timing.png'\n"
            "plt.savefig(path, dpi=110)\ndisplay(Image(filename=str(path)))\nstack.close()"),
    ]
    return new_notebook(cells=cells, metadata=_metadata())


KAGGLE_INTRO = """# DocGemma Connect on Kaggle: MedGemma 1.5 4B on one GPU

**Settings → Accelerator: GPU T4 x2** (the notebook uses one of the two T4s; an L4 works too). **P100 is not
supported**: Kaggle's torch has no kernels for it (compute capability 6.0), and the model backend refuses it at
load with that message. **Internet: on** (pip, and the Hub when MedGemma is not attached).

MedGemma, either way:
* **Kaggle Models** (no token): accept the terms on kaggle.com/models/google/medgemma, then *Add Input → Models →
  MedGemma*, Transformers, variation `medgemma-1.5-4b-it` (any 4B instruction-tuned one is found);
* **the Hugging Face Hub**: accept the terms at huggingface.co/google/medgemma-1.5-4b-it and add a secret
  (*Add-ons → Secrets*) named `HF_TOKEN` holding a token of that account.

The project: attach it as a dataset (*Add Input*; found at any depth under `/kaggle/input`), or put its git URL
in `REPO_URL` in step 1.

Steps: 1 settings, 2 the project, 3 dependencies (with the tested versions of `constraints.txt`), 4 the GPU,
5 MedGemma's source, 6 load MedGemma, 7 the app behind a login, 8-9 golden suites, 10 an experiment suite.
*Run All* reaches the app (step 7) within minutes (`bench/bench_kaggle_time.py` estimates it); the evaluations
run after it, on a few cases per variant unless `FULL_RUN = True` in step 1 (every case: about an hour on a T4).
Each step says which earlier step to run first if it was skipped."""

KAGGLE_SETTINGS = '''# Step 1: settings (edit here; nothing else needs editing).
import os, pathlib
REPO_URL = ""            # git URL of the project; only used when it is not attached as a dataset
HF_TOKEN_SECRET = "HF_TOKEN"  # Kaggle secret read when MedGemma is not attached from Kaggle Models
SHARE = True             # a public *.gradio.live link for the app (always behind a generated login)
FULL_RUN = False         # True: the experiment on every case (~340 trials, about an hour on a T4, after the app)
LIMIT = 0 if FULL_RUN else 3  # experiment cases per variant (0 = every case)
VARIANTS = ""            # experiment variants, comma-separated (empty = all)
GOLDEN_MODEL_FILE = "golden_tests/clinical_sessions.json"
RECORD_WALKTHROUGH = False  # True: step 11 records the judges' walkthrough on MedGemma (needs internet for Chromium)
# One GPU: Kaggle gives two T4s and 4-bit MedGemma fits on one; set before torch first starts CUDA.
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")
# Tests only (tests/integration/test_kaggle_notebook.py): a simulated /kaggle and small limits; unset on Kaggle.
TEST_ROOT = os.environ.get("DOCGEMMA_KAGGLE_TEST_ROOT")
KAGGLE = pathlib.Path(TEST_ROOT or "/kaggle")
if TEST_ROOT:
    SHARE, LIMIT, VARIANTS, GOLDEN_MODEL_FILE = False, 1, "full_desc_1shot,rule", "golden_tests/page_examples.json"
print("Kaggle root:", KAGGLE)'''

KAGGLE_PROJECT = '''# Step 2: the project, attached as a dataset (any depth under /kaggle/input) or cloned from REPO_URL.
if "KAGGLE" not in globals():
    raise SystemExit("Run step 1 (settings) first.")
import os, shutil, subprocess, sys

def find_project(root):
    """The first directory under ``root`` holding the project (docgemma/ and requirements.txt), or None."""
    for here, dirs, files in os.walk(root):
        if "requirements.txt" in files and os.path.isfile(os.path.join(here, "docgemma", "__init__.py")):
            return pathlib.Path(here)
        dirs.sort()
    return None

WORK = KAGGLE / "working" / "docgemma"
if not (WORK / "docgemma" / "__init__.py").is_file():
    attached = find_project(KAGGLE / "input")
    if attached is not None:
        print("project attached at", attached)
        shutil.copytree(attached, WORK, dirs_exist_ok=True)  # /kaggle/input is read-only
    elif REPO_URL:
        subprocess.run(["git", "clone", "--depth", "1", REPO_URL, str(WORK)], check=True)
    else:
        del WORK
        raise SystemExit("The project was not found under " + str(KAGGLE / "input") +
                         ": attach it as a dataset (Add Input), or set REPO_URL in step 1 and run steps 1-2 again.")
os.chdir(WORK)
if str(WORK) not in sys.path:
    sys.path.insert(0, str(WORK))
print("project:", WORK)'''

KAGGLE_INSTALL = '''# Step 3: dependencies with the tested versions (-c constraints.txt). Kaggle's own CUDA torch is kept: the
# torch line of requirements.txt is left out, so pip never swaps it for another build.
if "WORK" not in globals():
    raise SystemExit("Run step 2 (the project) first.")
lines = (WORK / "requirements.txt").read_text().splitlines()
kept = [line for line in lines if not line.split("#")[0].strip().lower().startswith("torch")]
(WORK / "requirements-kaggle.txt").write_text("\\n".join(kept) + "\\n")
command = [sys.executable, "-m", "pip", "install", "-q", "-r", "requirements-kaggle.txt", "-c", "constraints.txt"]
if TEST_ROOT:  # CI: the same command, resolved against what is installed; nothing downloaded or changed
    command += ["--dry-run", "--no-index"]
if subprocess.run(command, cwd=WORK).returncode != 0:  # pip said why above; one line here, no traceback
    raise SystemExit("pip could not install the dependencies: this step needs Internet on (Settings → Internet; "
                     "step 5 too unless MedGemma is attached from Kaggle Models).")
print("installed. If pip replaced a package this session had already imported, restart the session "
      "(Run → Restart & clear cell outputs) and run from step 1: the project is already in place.")'''

KAGGLE_GPU = '''# Step 4: the GPU. T4 (or L4) is supported; P100 is refused with the reason (no kernels in Kaggle's torch).
if "WORK" not in globals():
    raise SystemExit("Run step 2 (the project) first.")
import torch
from docgemma.llm.transformers_backend import check_gpu_supported

if torch.cuda.is_available():
    major, minor = torch.cuda.get_device_capability(0)
    print(f"{torch.cuda.get_device_name(0)} (compute capability {major}.{minor}), "
          f"{torch.cuda.device_count()} visible, torch {torch.__version__}")
    check_gpu_supported(torch)
else:
    print("No GPU: the embedded CPU demo model (SmolLM2-135M) runs instead of MedGemma; it is not clinically "
          "meaningful. On Kaggle: Settings → Accelerator → GPU T4 x2.")'''

KAGGLE_SOURCE = '''# Step 5: where MedGemma comes from. Attached from Kaggle Models: no token. Otherwise the Hub, with the
# HF_TOKEN secret (MedGemma is gated).
if "WORK" not in globals():
    raise SystemExit("Run step 2 (the project) first.")
import torch
from docgemma.llm.transformers_backend import kaggle_model_dir

MODEL_DIR = kaggle_model_dir(KAGGLE / "input")
if MODEL_DIR is not None:
    print("MedGemma from Kaggle Models:", MODEL_DIR, "(no Hugging Face token needed)")
    if torch.cuda.is_available():
        os.environ["DOCGEMMA_MODEL"] = str(MODEL_DIR)
else:
    from kaggle_secrets import UserSecretsClient

    try:
        token = UserSecretsClient().get_secret(HF_TOKEN_SECRET)
    except Exception as exc:  # the client raises a bare Exception for a secret that is not attached
        token = None
        print(f"No {HF_TOKEN_SECRET} secret ({type(exc).__name__}).")
    if token:
        os.environ["HF_TOKEN"] = token
        print(f"MedGemma from the Hugging Face Hub, with the {HF_TOKEN_SECRET} secret.")
    elif torch.cuda.is_available():
        raise SystemExit("MedGemma is neither attached nor reachable: attach it from Kaggle Models (Add Input → "
                         f"Models → MedGemma), or add the {HF_TOKEN_SECRET} secret (Add-ons → Secrets), then rerun this step.")
    else:
        print("No GPU: no MedGemma needed (the embedded demo model runs).")'''

KAGGLE_LOAD = '''# Step 6: MedGemma in 4-bit NF4 on the GPU (vision tower, projector and head unquantized, in the compute dtype:
# float32 on a T4, bf16 on an L4); the JSON constraints of every agent schema are compiled now, so no turn waits.
if "WORK" not in globals():
    raise SystemExit("Run step 2 (the project) first.")
import logging, time
from docgemma.agent.schemas import agent_schemas
from docgemma.llm.transformers_backend import load_transformers_llm
from docgemma.tools.registry import default_registry

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", force=True)
start = time.time()
llm = load_transformers_llm(os.environ.get("DOCGEMMA_MODEL"))
print(llm.describe(), f"loaded in {time.time() - start:.0f} s")
start = time.time()
llm.prepare_schemas(agent_schemas(default_registry()))
print(f"{len(llm.constraint_build_s)} JSON constraints ready in {time.time() - start:.1f} s")
logging.getLogger().setLevel(logging.WARNING)'''

KAGGLE_GOLDEN_ORACLE = '''# Step 8: every golden file in oracle mode: the deterministic machinery, must all pass (no model needed).
if "WORK" not in globals():
    raise SystemExit("Run step 2 (the project) first.")
import glob, io
from docgemma.eval.golden import run_file

for path in sorted(glob.glob("golden_tests/*.json")):
    report = io.StringIO()
    code = run_file(pathlib.Path(path), None, None, report)
    print(report.getvalue().splitlines()[0], "PASS" if code == 0 else "FAIL")'''

KAGGLE_GOLDEN_MODEL = '''# Step 9: the same turns answered by the model (per-field accuracy, model calls per turn).
if "llm" not in globals():
    raise SystemExit("Run step 6 (load MedGemma) first.")
from docgemma.eval.golden import run_file

with open("golden_model.jsonl", "w") as out:
    run_file(pathlib.Path(GOLDEN_MODEL_FILE), llm, out)'''

KAGGLE_EXPERIMENT = '''# Step 10: one experiment suite, TOOL_SELECT; red ticks are seed 002's figures on MedGemma 4B.
if "llm" not in globals():
    raise SystemExit("Run step 6 (load MedGemma) first.")
from IPython.display import Image, display
from docgemma.eval.experiments import notebook

result = notebook.run("tool_select", llm, limit=LIMIT or None, variants=[v for v in VARIANTS.split(",") if v] or None,
                      out=pathlib.Path("experiments_out"))
display(result.frame)
for figure in result.figures:
    display(Image(filename=str(figure)))'''

KAGGLE_APP = '''# Step 7: the app, with the model of step 6 (loaded here if step 6 was skipped), started before the evaluations
# so that it is reachable minutes after Run All; the steps after it share the model with it (one call at a time).
# The share link is public, and the page can write to the patient record: it always asks for the login below.
if "WORK" not in globals():
    raise SystemExit("Run step 2 (the project) first.")
import secrets
from docgemma.config import Settings
from docgemma.serve import assemble

if "demo" in globals():
    demo.close()  # this step run again: stop the previous server first
settings = Settings.from_env()
demo = assemble(settings, llm=globals().get("llm")).demo
LOGIN = ("clinician", secrets.token_urlsafe(12))
demo.launch(share=SHARE, auth=LOGIN, prevent_thread_lock=True)
print(f"Login: user {LOGIN[0]!r}, password {LOGIN[1]!r} (new each run; share it only with the clinicians testing)")'''

KAGGLE_WALKTHROUGH = '''# Step 11 (off by default: RECORD_WALKTHROUGH in step 1): the judges' walkthrough on MedGemma, the same
# scenes and command as kaggle_submission/walkthrough.mp4 (recorded on the CPU demo model). It starts its own app
# process, so a second 4-bit MedGemma loads beside step 6's (both fit a T4). Chromium and ffmpeg need internet.
if RECORD_WALKTHROUGH:
    if "WORK" not in globals():
        raise SystemExit("Run step 2 (the project) first.")
    import subprocess, sys
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "playwright", "imageio-ffmpeg"], check=True)
    subprocess.run([sys.executable, "-m", "playwright", "install", "--with-deps", "chromium"], check=True)
    out = pathlib.Path("/kaggle/working/walkthrough")
    subprocess.run([sys.executable, "scripts/walkthrough.py", "--backend", "transformers", "--out", str(out)],
                   cwd=WORK, check=True)
    print(f"video and screenshots: {out}")
else:
    print("Walkthrough not recorded (RECORD_WALKTHROUGH = False in step 1).")'''

KAGGLE_CELLS = [
    ("md", KAGGLE_INTRO),
    ("code", KAGGLE_SETTINGS),
    ("code", KAGGLE_PROJECT),
    ("code", KAGGLE_INSTALL),
    ("code", KAGGLE_GPU),
    ("code", KAGGLE_SOURCE),
    ("code", KAGGLE_LOAD),
    ("md", "## The app, behind a login\n\nThe model loaded in step 6 serves the app too (one copy on the GPU). "
           "It starts before the evaluations below, which keep running while the app serves."),
    ("code", KAGGLE_APP),
    ("md", "## Golden suites\n\nOracle mode checks the deterministic machinery (must be all green); model mode "
           "measures MedGemma on the same turns.\n\nCommand line equivalents: `python -m docgemma golden "
           "golden_tests/*.json` and `python -m docgemma golden golden_tests/clinical_sessions.json --backend "
           "transformers --out golden_model.jsonl`."),
    ("code", KAGGLE_GOLDEN_ORACLE),
    ("code", KAGGLE_GOLDEN_MODEL),
    ("md", "## One experiment suite: TOOL_SELECT\n\nCommand line equivalent: `python -m docgemma experiment "
           "tool_select --backend transformers --out experiments_out/tool_select`."),
    ("code", KAGGLE_EXPERIMENT),
    ("md", "## The walkthrough on MedGemma (optional)\n\nCommand line equivalent: `python scripts/walkthrough.py "
           "--backend transformers`."),
    ("code", KAGGLE_WALKTHROUGH),
]


def kaggle_notebook() -> nbformat.NotebookNode:
    cells = [new_markdown_cell(src) if kind == "md" else new_code_cell(src) for kind, src in KAGGLE_CELLS]
    meta = _metadata()
    meta["accelerator"] = "gpu"
    return new_notebook(cells=cells, metadata=meta)


def _metadata() -> dict[str, object]:
    return {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"}}


def targets() -> dict[Path, nbformat.NotebookNode]:
    """Every notebook this script writes."""
    out = {ROOT / "notebooks" / f"{i:02d}_{suite}.ipynb": suite_notebook(suite) for i, suite in enumerate(SUITES, 1)}
    out[ROOT / "notebooks" / "00_demo_patient_session.ipynb"] = demo_notebook()
    out[ROOT / "kaggle_submission" / "docgemma_kaggle.ipynb"] = kaggle_notebook()
    return out


def _text(notebook: nbformat.NotebookNode) -> str:
    # Stable cell ids, so a rebuild of unchanged code gives an identical file.
    for i, cell in enumerate(notebook.cells):
        cell["id"] = f"cell-{i:02d}"
    return nbformat.writes(notebook) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a committed notebook is out of date")
    args = parser.parse_args()
    stale = []
    for path, notebook in targets().items():
        text = _text(notebook)
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    for path in stale:
        print(f"out of date: {path.relative_to(ROOT)} (run python scripts/build_notebooks.py)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
