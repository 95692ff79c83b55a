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

from docgemma.experiments.seed002 import REFERENCE  # noqa: E402

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
            f"in `docgemma/experiments/data/`.\n\n**Seed 002's figures** (§12-§13):\n\n{_seed_table(suite)}\n\n"
            "On CPU the embedded SmolLM2-135M runs instead of MedGemma: its figures are far lower and only show that "
            "the pipeline runs. Run on a GPU (Kaggle T4, Colab) with `BACKEND = \"transformers\"` and `LIMIT = 0` for "
            "the real comparison."),
        params,
        new_code_cell(SETUP),
        new_code_cell("from docgemma.experiments import notebook\n\nllm = notebook.load_model(BACKEND)\n"
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
        new_code_cell('from docgemma.golden import sample_image\n\n'
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


KAGGLE_CELLS = [
    ("md", "# DocGemma Connect on Kaggle: MedGemma 4B on the GPU\n\nSettings → Accelerator: **GPU T4 x2** (or P100); "
           "Internet: **on**; Add-ons → Secrets: **HF_TOKEN** (a Hugging Face token whose account accepted the "
           "MedGemma licence at huggingface.co/google/medgemma-1.5-4b-it).\n\nThis notebook installs the project, "
           "loads MedGemma in 4-bit on the GPU, runs the golden suites (oracle and model), runs one node-level "
           "experiment suite with seed 002's figures beside the measured ones, and launches the app with a public "
           "share link."),
    ("code", "!nvidia-smi"),
    ("code", "# 1. The project: attached as a Kaggle dataset, or cloned (set REPO_URL to the repository you submitted).\n"
             "import os, pathlib, shutil, subprocess, sys\n"
             "REPO_URL = os.environ.get('DOCGEMMA_REPO_URL', '')  # e.g. https://github.com/<you>/docgemma-connect\n"
             "WORK = pathlib.Path('/kaggle/working/docgemma')\n"
             "attached = next(pathlib.Path('/kaggle/input').glob('*/docgemma/__init__.py'), None)\n"
             "if not WORK.exists():\n"
             "    if attached is not None:\n"
             "        shutil.copytree(attached.parents[1], WORK)\n"
             "    elif REPO_URL:\n"
             "        subprocess.run(['git', 'clone', '--depth', '1', REPO_URL, str(WORK)], check=True)\n"
             "    else:\n"
             "        raise SystemExit('Attach the project as a dataset or set REPO_URL')\n"
             "os.chdir(WORK); sys.path.insert(0, str(WORK))\nprint(WORK)"),
    ("code", "# 2. Dependencies (Kaggle's own CUDA torch is kept; requirements.txt only adds what is missing).\n"
             "!pip install -q -r requirements.txt"),
    ("code", "# 3. The Hugging Face token from Kaggle secrets (MedGemma is a gated model).\n"
             "from kaggle_secrets import UserSecretsClient\n\n"
             "os.environ['HF_TOKEN'] = UserSecretsClient().get_secret('HF_TOKEN')\n"
             "from huggingface_hub import whoami\nprint('logged in as', whoami(token=os.environ['HF_TOKEN'])['name'])"),
    ("code", "# 4. MedGemma 4B, 4-bit NF4 on GPU 0 (the default of the transformers backend when CUDA is present).\n"
             "import time\nfrom docgemma.llm.transformers_backend import load_transformers_llm\n\n"
             "start = time.time()\nllm = load_transformers_llm()\nprint(llm.name, f'loaded in {time.time() - start:.0f} s')"),
    ("md", "## Golden suites\n\nOracle mode checks the deterministic machinery (must be all green); model mode "
           "measures MedGemma on the same turns (per-field accuracy, model calls per turn).\n\n"
           "Command line equivalents: `python -m docgemma golden golden_tests/*.json` and "
           "`python -m docgemma golden golden_tests/clinical_sessions.json --backend transformers --out golden_model.jsonl`."),
    ("code", "import glob, io\nfrom docgemma.golden import run_file\n\n"
             "for path in sorted(glob.glob('golden_tests/*.json')):\n"
             "    report = io.StringIO()\n    code = run_file(pathlib.Path(path), None, None, report)\n"
             "    print(report.getvalue().splitlines()[0], 'PASS' if code == 0 else 'FAIL')"),
    ("code", "with open('golden_model.jsonl', 'w') as out:\n"
             "    run_file(pathlib.Path('golden_tests/clinical_sessions.json'), llm, out)"),
    ("md", "## One experiment suite: TOOL_SELECT\n\nCommand line equivalent: "
           "`python -m docgemma experiment tool_select --backend transformers --out experiments_out/tool_select`. "
           "The red ticks are seed 002's figures on MedGemma 4B."),
    ("code", "from IPython.display import Image, display\nfrom docgemma.experiments import notebook\n\n"
             "result = notebook.run('tool_select', llm, limit=None, variants=None, out=pathlib.Path('experiments_out'))\n"
             "display(result.frame)\nfor figure in result.figures:\n    display(Image(filename=str(figure)))"),
    ("md", "## The app, with a public share link\n\nThe experiment model is freed first, so the app's own load fits "
           "on one T4."),
    ("code", "import gc, torch\ndel llm, result\ngc.collect(); torch.cuda.empty_cache()\n\n"
             "from docgemma.config import Settings\nfrom docgemma.runtime import build_assistant, build_ehr, network_probe\n"
             "from docgemma.ui.app import NetworkStatus, build_demo\n\n"
             "settings = Settings.from_env()\nehr = build_ehr(settings)\nassistant = build_assistant(settings, ehr)\n"
             "demo = build_demo(assistant, ehr, assistant.llm.name, getattr(assistant.llm, 'fallback_note', None),\n"
             "                  NetworkStatus(network_probe(settings)))\n"
             "demo.launch(share=True)  # prints the public *.gradio.live link"),
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
