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


#: The committed estimate of bench/bench_kaggle_time.py, quoted by the notebook's first cell (with its source).
KAGGLE_TIME = ROOT / "bench" / "results" / "results_kaggle_time.json"


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min ({seconds:,.0f} s)"


def kaggle_intro() -> str:
    import json

    times = json.loads(KAGGLE_TIME.read_text())
    to_app = times["default"]["time_to_app_s"]
    evaluations = times["evaluations"]["model_s"]
    full = times["full_run"]["evaluations"]["model_s"]
    return f"""# DocGemma Connect on Kaggle: MedGemma 1.5 4B on one GPU

**Run All** starts the app first: steps 1-4 install the project, load MedGemma once and serve the app behind a login
(a public link with `SHARE`), then answer one turn to show it works. The evaluations (step 5) and the walkthrough
(step 6) run only on request, and never beside a judge's turns: on the second T4 in a process of their own while the
app keeps serving, or, with one GPU, after the app is stopped. A saved version (*Save Version*, or `kaggle kernels
push`) runs in batch, where no one can reach the app: there the evaluations run by default, after the check turn,
and their outputs are saved with the notebook.

What it needs, all set by `kaggle_submission/kernel-metadata.json` when pushed with `kaggle kernels push`
(`kaggle_submission/README.md`), or by hand in *Settings* and *Add Input*:
* **GPU T4 x2** (`machine_shape`). The app uses the first T4; a P100 is refused in one sentence (Kaggle's torch has
  no kernels for it). Without a GPU step 4 stops, unless `ALLOW_CPU` runs the 135M CPU demo model instead.
* **Internet on** (`enable_internet`): step 3 installs the tested versions with pip.
* **The code** as a dataset (`dataset_sources`: `docgemma-connect-code`, built by `scripts/kaggle_bundle.py`), found
  at `/kaggle/input/docgemma-connect-code/` (or `/kaggle/input/datasets/<owner>/docgemma-connect-code/`).
* **MedGemma** from Kaggle Models (`model_sources`: `google/medgemma/transformers/medgemma-1.5-4b-it/1`, its terms
  accepted on kaggle.com/models/google/medgemma), found at `/kaggle/input/medgemma/transformers/medgemma-1.5-4b-it/1/`;
  otherwise a secret `HF_TOKEN` of a Hugging Face account that accepted them.

Each step says what it needs and, when it is missing, stops with one sentence saying so.

**Time**, estimated, not measured (no T4 was used to build this): Run All to the app's login line about
{_minutes(to_app)}; the evaluations, when asked for, about {_minutes(evaluations)} of model time
({_minutes(full)} with `FULL_RUN`). Source: `python bench/bench_kaggle_time.py`
(`bench/results/results_kaggle_time.json`), which costs each cell of this notebook; its pip and model-load seconds
are assumptions."""


KAGGLE_SETTINGS = '''# Step 1: settings. Needs: nothing. Edit here; nothing else needs editing. Each setting reads an environment
# variable first (the tests set them: tests/integration/test_kaggle_notebook.py); on Kaggle they are unset.
import os, pathlib, shutil, subprocess, sys
env = os.environ.get
INPUT = pathlib.Path(env("DOCGEMMA_KAGGLE_INPUT", "/kaggle/input"))  # where Kaggle mounts the attachments
WORKING = pathlib.Path(env("DOCGEMMA_KAGGLE_WORKING", "/kaggle/working"))  # writable; the run's output
DATASET = env("DOCGEMMA_KAGGLE_DATASET", "docgemma-connect-code")  # the code dataset's slug (kernel-metadata.json)
REPO_URL = env("DOCGEMMA_KAGGLE_REPO_URL", "")  # a git URL: only when the code dataset is not attached (internet)
# A saved version (Save Version, kaggle kernels push) runs in batch: no one can reach its app, so there the
# evaluations run by default (after the app's check turn) and their outputs are saved with the notebook.
BATCH = env("KAGGLE_KERNEL_RUN_TYPE", "") == "Batch"
SHARE = env("DOCGEMMA_KAGGLE_SHARE", "0" if BATCH else "1") == "1"  # a public *.gradio.live link, behind a login
ALLOW_CPU = env("DOCGEMMA_KAGGLE_ALLOW_CPU", "0") == "1"  # no GPU: the 135M CPU demo model instead of MedGemma
RUN_EVALUATIONS = env("DOCGEMMA_KAGGLE_EVALUATIONS", "1" if BATCH else "0") == "1"  # step 5: golden suites, an experiment
FULL_RUN = False  # True: the experiment on every case, not a few per variant
LIMIT = int(env("DOCGEMMA_KAGGLE_LIMIT", "0" if FULL_RUN else "3"))  # experiment cases per variant (0 = every case)
VARIANTS = env("DOCGEMMA_KAGGLE_VARIANTS", "")  # experiment variants, comma-separated (empty = all)
GOLDEN_MODEL_FILE = env("DOCGEMMA_KAGGLE_GOLDEN_FILE", "golden_tests/clinical_sessions.json")
RECORD_WALKTHROUGH = env("DOCGEMMA_KAGGLE_WALKTHROUGH", "0") == "1"  # step 6: the walkthrough video on MedGemma
PIP_ARGS = env("DOCGEMMA_KAGGLE_PIP_ARGS", "").split()  # extra pip arguments (tests: --dry-run --no-index)
HF_TOKEN_SECRET = "HF_TOKEN"  # Kaggle secret read only when MedGemma is not attached

# The GPUs: the app's model on the first; the second (Kaggle's T4 x2) is left to step 5/6, which load their own copy
# there in a process of their own. Pinned here, before torch is first imported (it reads CUDA_VISIBLE_DEVICES once).
if "DOCGEMMA_KAGGLE_GPUS" not in os.environ:  # first run: every GPU of the session, by nvidia-smi
    listed = (subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], capture_output=True,
                             text=True) if shutil.which("nvidia-smi") else None)
    os.environ["DOCGEMMA_KAGGLE_GPUS"] = ",".join(listed.stdout.split()) if listed and listed.returncode == 0 else ""
GPUS = [g for g in os.environ["DOCGEMMA_KAGGLE_GPUS"].split(",") if g]
if GPUS:
    os.environ["CUDA_VISIBLE_DEVICES"] = GPUS[0]
SPARE_GPU = GPUS[1] if len(GPUS) > 1 else None
print(f"attachments: {INPUT}; output: {WORKING}; GPUs: {GPUS or 'none'} (the app on {GPUS[0] if GPUS else 'CPU'}"
      f"{', evaluations on ' + SPARE_GPU if SPARE_GPU else ''})")'''

KAGGLE_PROJECT = '''# Step 2: the project's code. Needs: the code dataset attached (kernel-metadata.json's dataset_sources), or REPO_URL
# and internet. Copied to WORKING (the attachments are read-only).
if "INPUT" not in globals():
    raise SystemExit("Run step 1 (settings) first.")
import zipfile

def find_project(root):
    """The first directory under ``root`` holding the project (docgemma/ and requirements.txt), or None."""
    for here, dirs, files in os.walk(root):
        if "requirements.txt" in files and os.path.isfile(os.path.join(here, "docgemma", "__init__.py")):
            return pathlib.Path(here)
        dirs.sort()
    return None

WORK = WORKING / "docgemma"
if not (WORK / "docgemma" / "__init__.py").is_file():
    # Kaggle mounts a dataset at INPUT/<slug>/, or INPUT/datasets/<owner>/<slug>/ in its newer layout.
    places = [p for p in [INPUT / DATASET, *sorted(INPUT.glob(f"datasets/*/{DATASET}"))] if p.is_dir()]
    attached = next((found for place in [*places, INPUT] if place.is_dir() and (found := find_project(place))), None)
    archives = [z for place in places for z in sorted(place.rglob("*.zip"))]  # an upload Kaggle left packed
    if attached is None and archives:
        with zipfile.ZipFile(archives[0]) as packed:
            packed.extractall(WORKING / "unpacked")
        attached = find_project(WORKING / "unpacked")
    if attached is not None:
        print("project attached at", attached)
        shutil.copytree(attached, WORK, dirs_exist_ok=True)
    elif REPO_URL:
        subprocess.run(["git", "clone", "--depth", "1", REPO_URL, str(WORK)], check=True)
    else:
        del WORK
        raise SystemExit(f"The code dataset {DATASET!r} is not attached under {INPUT}: push the notebook with "
                         "kaggle_submission/kernel-metadata.json (or Add Input → Datasets), then run from step 1.")
os.chdir(WORK)
if str(WORK) not in sys.path:
    sys.path.insert(0, str(WORK))
print("project:", WORK)'''

KAGGLE_INSTALL = '''# Step 3: dependencies at the tested versions (-c constraints.txt). Needs: internet. Kaggle's own CUDA build of
# torch is kept: the torch line of requirements.txt is left out, so pip never swaps it for another build.
if "WORK" not in globals():
    raise SystemExit("Run step 2 (the project) first.")
import socket, time

lines = (WORK / "requirements.txt").read_text().splitlines()
kept = [line for line in lines if not line.split("#")[0].strip().lower().startswith("torch")]
(WORK / "requirements-kaggle.txt").write_text("\\n".join(kept) + "\\n")
if "--no-index" not in PIP_ARGS:
    try:
        socket.create_connection(("pypi.org", 443), timeout=10).close()
    except OSError:
        raise SystemExit("This step needs internet (pip): turn on Settings → Internet (kernel-metadata.json's "
                         "enable_internet), then rerun it.") from None
from importlib import metadata

def loaded_versions():
    """The installed version of every distribution this session has already imported from."""
    owners = metadata.packages_distributions()
    found = {}
    for dist in {d for name in list(sys.modules) if "." not in name for d in owners.get(name, [])}:
        try:
            found[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return found

before = loaded_versions()
command = [sys.executable, "-m", "pip", "install", "-q", "--progress-bar", "off", "-r", "requirements-kaggle.txt",
           "-c", "constraints.txt", *PIP_ARGS]
print("pip install -r requirements-kaggle.txt -c constraints.txt (quiet: only errors are printed) …", flush=True)
start = time.time()
if subprocess.run(command, cwd=WORK).returncode != 0:
    raise SystemExit("pip could not install the dependencies: its error is printed above.")
after = loaded_versions()
changed = sorted(d for d, v in before.items() if after.get(d, v) != v)
print(f"installed in {time.time() - start:.0f} s.")
if changed:  # the session still runs the old code of these: a restart loads the new
    print(f"pip replaced {', '.join(changed)}, already imported here: restart the session (Run → Restart) and run "
          "from step 1 (the project stays in place).")'''

KAGGLE_APP = '''# Step 4: the app. Needs: a GPU (T4) and MedGemma attached from Kaggle Models (kernel-metadata.json's model_sources)
# or the HF_TOKEN secret. MedGemma loads once, in 4-bit NF4 on the first GPU (float32 compute on a T4, bf16 on an
# L4; the JSON constraints of every agent schema compiled now, so no turn waits); docgemma.serve.assemble builds the
# app on it, served behind a login; then one turn through the app's workspace shows that it answers.
if "WORK" not in globals():
    raise SystemExit("Run step 2 (the project) first.")
import logging, secrets, time
import torch
from docgemma.agent.events import TurnDone
from docgemma.agent.schemas import agent_schemas
from docgemma.config import Settings
from docgemma.llm.transformers_backend import UnsupportedGPUError, check_gpu_supported, kaggle_model_dir
from docgemma.llm.transformers_backend import load_transformers_llm
from docgemma.serve import assemble
from docgemma.tools.registry import default_registry
from docgemma.ui.server import launch_in_background
from docgemma.ui.text import render_timeline
from docgemma.workspace import Workspace

MODEL_DIR = kaggle_model_dir(INPUT)
if "llm" not in globals():
    if torch.cuda.is_available():
        name, (major, minor) = torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0)
        print(f"{name} (compute capability {major}.{minor}), torch {torch.__version__}")
        try:
            check_gpu_supported(torch)
        except UnsupportedGPUError:
            raise SystemExit(f"The {name} is not supported by Kaggle's torch (no sm_{major}{minor} kernels): choose "
                             "Settings → Accelerator → GPU T4 x2.") from None
        if MODEL_DIR is None:
            try:
                from kaggle_secrets import UserSecretsClient
                os.environ["HF_TOKEN"] = UserSecretsClient().get_secret(HF_TOKEN_SECRET)
            except Exception:  # not on Kaggle, or no such secret (the client raises a bare Exception)
                raise SystemExit("MedGemma is not attached: add it from Kaggle Models (kernel-metadata.json's "
                                 f"model_sources, or Add Input → Models → MedGemma) or a {HF_TOKEN_SECRET} secret, "
                                 "then rerun this step.") from None
            print(f"MedGemma from the Hugging Face Hub, with the {HF_TOKEN_SECRET} secret")
        else:
            print("MedGemma from Kaggle Models:", MODEL_DIR)
        model = str(MODEL_DIR) if MODEL_DIR else None
    elif ALLOW_CPU:
        print("No GPU: the 135M CPU demo model stands in for MedGemma (ALLOW_CPU); it is not clinically meaningful.")
        model = None
    else:
        raise SystemExit("This step needs a GPU: choose Settings → Accelerator → GPU T4 x2 (kernel-metadata.json's "
                         "machine_shape), or set ALLOW_CPU = True in step 1 for the CPU demo model.")
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", force=True)
    start = time.time()
    llm = load_transformers_llm(model)
    llm.prepare_schemas(agent_schemas(default_registry()))
    logging.getLogger().setLevel(logging.WARNING)
    print(f"{llm.describe()} ready in {time.time() - start:.0f} s")

if "APP" in globals():
    APP.demo.close()  # this step run again: stop the previous server first
SETTINGS = Settings.from_env()
APP = assemble(SETTINGS, llm=llm)
LOGIN = ("clinician", secrets.token_urlsafe(12))
# As the app serves everywhere (the page's options, /healthz, the login gate on every route), without blocking.
launch_in_background(APP.demo, APP.ready, APP.metrics, auth=LOGIN, max_file_size=SETTINGS.max_image_bytes,
                     share=SHARE)
print(f"Login: user {LOGIN[0]!r}, password {LOGIN[1]!r} (new each run; share it only with the clinicians testing)")

def ask(message, thread="notebook"):
    """One turn through the app's own workspace (as the page sends it): the answer and the reasoning timeline."""
    for event in Workspace(APP.assistant, APP.ehr, APP.metrics).turn(thread, message):
        if isinstance(event, TurnDone):
            print(event.result.answer, "\\n", render_timeline(event.result), sep="")
            return event.result
    print("(the turn waits for an approval: open the app)")

FIRST_TURN = ask("Find patient Grace Mensah", thread="notebook-check")'''

KAGGLE_EVALUATIONS = '''# Step 5 (on request: RUN_EVALUATIONS in step 1): every golden file in oracle mode (no model), the clinical
# sessions answered by the model, and the TOOL_SELECT experiment. Needs: step 4's model, or a second GPU. Never
# beside a judge's turns: with a second GPU they run there, in a process with its own MedGemma, while the app keeps
# serving on the first; with one GPU (or none) the app is stopped first and they use its model.
import glob, io
if not RUN_EVALUATIONS:
    print("Evaluations not run (RUN_EVALUATIONS = False in step 1): the app keeps serving.")
elif "WORK" not in globals():
    raise SystemExit("Run step 2 (the project) first.")
else:
    from docgemma.eval.golden import run_file

    for path in sorted(glob.glob("golden_tests/*.json")):
        report = io.StringIO()
        code = run_file(pathlib.Path(path), None, None, report)
        print(report.getvalue().splitlines()[0], "PASS" if code == 0 else "FAIL")
    variants = [v for v in VARIANTS.split(",") if v]
    if SPARE_GPU is not None:
        print(f"on GPU {SPARE_GPU} (its own MedGemma); the app keeps serving on GPU {GPUS[0]}")
        spare = {**os.environ, "CUDA_VISIBLE_DEVICES": SPARE_GPU}
        if globals().get("MODEL_DIR"):
            spare["DOCGEMMA_MODEL"] = str(MODEL_DIR)
        runs = [["golden", GOLDEN_MODEL_FILE, "--backend", "transformers", "--out", "golden_model.jsonl"],
                ["experiment", "tool_select", "--backend", "transformers", "--out", "experiments_out/tool_select",
                 *(["--limit", str(LIMIT)] if LIMIT else []), *(["--variants", ",".join(variants)] if variants else [])]]
        for run in runs:
            if subprocess.run([sys.executable, "-m", "docgemma", *run], cwd=WORK, env=spare).returncode != 0:
                raise SystemExit(f"docgemma {run[0]} failed on GPU {SPARE_GPU}: its error is printed above.")
        print("report: experiments_out/tool_select/report.md")
    elif "llm" not in globals():
        raise SystemExit("Run step 4 (the app, which loads the model) first.")
    else:
        from IPython.display import Image, display
        from docgemma.eval.experiments import notebook

        if "APP" in globals():
            APP.demo.close()
            del APP
            print("The app is stopped while the evaluations use its model (one GPU): rerun step 4 to serve it again.")
        with open("golden_model.jsonl", "w") as out:
            run_file(pathlib.Path(GOLDEN_MODEL_FILE), llm, out)
        result = notebook.run("tool_select", llm, limit=LIMIT or None, variants=variants or None,
                              out=pathlib.Path("experiments_out"))
        display(result.frame)
        for figure in result.figures:
            display(Image(filename=str(figure)))'''

KAGGLE_WALKTHROUGH = '''# Step 6 (on request: RECORD_WALKTHROUGH in step 1): the judges' walkthrough on MedGemma, the scenes and command of
# kaggle_submission/walkthrough.mp4 (recorded on the CPU demo model). Needs: internet (Chromium, ffmpeg) and a GPU.
# It starts an app process with its own MedGemma: on the second GPU, or, with one, after this notebook's app and
# model are released (never two copies on one GPU).
if not RECORD_WALKTHROUGH:
    print("Walkthrough not recorded (RECORD_WALKTHROUGH = False in step 1).")
elif "WORK" not in globals():
    raise SystemExit("Run step 2 (the project) first.")
else:
    walk = dict(os.environ)
    if SPARE_GPU is not None:
        walk["CUDA_VISIBLE_DEVICES"] = SPARE_GPU
    else:
        import gc
        if "APP" in globals():
            APP.demo.close()
            del APP
        if "llm" in globals():
            del llm
        gc.collect()
        import torch
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
            held = torch.cuda.memory_allocated() / 2**30
            if held > 0.5:  # something still refers to the model: loading another beside it is what this avoids
                raise SystemExit(f"This session still holds {held:.1f} GiB on the GPU: restart it, then run steps 1-3 "
                                 "and this one (RECORD_WALKTHROUGH = True).")
        print("The app is stopped and its model released for the walkthrough's own (one GPU).")
    if globals().get("MODEL_DIR"):
        walk["DOCGEMMA_MODEL"] = str(MODEL_DIR)
    for command in ([sys.executable, "-m", "pip", "install", "-q", "playwright", "imageio-ffmpeg"],
                    [sys.executable, "-m", "playwright", "install", "--with-deps", "chromium"]):
        if subprocess.run(command).returncode != 0:
            raise SystemExit("This step needs internet (Chromium and ffmpeg): turn on Settings → Internet.")
    out = WORKING / "walkthrough"
    done = subprocess.run([sys.executable, "scripts/walkthrough.py", "--backend", "transformers", "--out", str(out)],
                          cwd=WORK, env=walk)
    if done.returncode != 0:
        raise SystemExit("The walkthrough failed: its error is printed above.")
    print(f"video and screenshots: {out}")'''


def kaggle_cells() -> list[tuple[str, str]]:
    return [
        ("md", kaggle_intro()),
        ("code", KAGGLE_SETTINGS),
        ("code", KAGGLE_PROJECT),
        ("code", KAGGLE_INSTALL),
        ("code", KAGGLE_APP),
        ("md", "## Evaluations, on request\n\nOracle mode checks the deterministic machinery (must be all green); "
               "model mode measures MedGemma on the same turns; the TOOL_SELECT experiment compares seed 002's "
               "prompt variants (red ticks: its figures on MedGemma 4B).\n\nCommand line equivalents: `python -m "
               "docgemma golden golden_tests/*.json`, `python -m docgemma golden golden_tests/clinical_sessions.json "
               "--backend transformers --out golden_model.jsonl` and `python -m docgemma experiment tool_select "
               "--backend transformers`."),
        ("code", KAGGLE_EVALUATIONS),
        ("md", "## The walkthrough on MedGemma, on request\n\nCommand line equivalent: `python scripts/walkthrough.py "
               "--backend transformers`."),
        ("code", KAGGLE_WALKTHROUGH),
    ]


def kaggle_notebook() -> nbformat.NotebookNode:
    cells = [new_markdown_cell(src) if kind == "md" else new_code_cell(src) for kind, src in kaggle_cells()]
    meta = _metadata()
    meta["accelerator"] = "gpu"
    # What a notebook saved on Kaggle carries: a notebook imported by hand opens with a T4 and internet on.
    meta["kaggle"] = {"accelerator": "nvidiaTeslaT4", "isGpuEnabled": True, "isInternetEnabled": True,
                      "language": "python", "sourceType": "notebook"}
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
