"""Every install path applies constraints.txt, and the lower bounds of the model stack are what CI tests.

Install paths: scripts/dev.sh (this machine, CI), the README's manual commands, deploy/Dockerfile, the Kaggle
notebook. Floors: ``scripts/floors.py`` reads requirements.txt's lower bounds, ``bash scripts/dev.sh floors``
installs exactly those and runs the backend's tests (``-m floors``), and CI (``.ci/run``) runs it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).parents[2]
PIP_REQUIREMENTS = re.compile(r"(?:pip install|install_step )[^\n]*?(?:-r requirements[\w-]*\.txt|-e \.)[^\n]*")


def commands(text: str) -> list[str]:
    return [m.group(0) for m in PIP_REQUIREMENTS.finditer(text)]


def test_dev_script_dockerfile_and_readme_install_with_constraints() -> None:
    for name in ("scripts/dev.sh", "deploy/Dockerfile", "README.md"):
        found = commands((ROOT / name).read_text())
        assert found or name == "deploy/Dockerfile", name
        for command in found:
            assert "-c constraints.txt" in command, f"{name}: {command}"


def test_kaggle_notebook_installs_with_constraints_and_keeps_kaggles_torch() -> None:
    cells = json.loads((ROOT / "kaggle_submission" / "docgemma_kaggle.ipynb").read_text())["cells"]
    # Step 3 installs the app's dependencies (step 6, off by default, installs only the walkthrough's browser tools).
    (install,) = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"
                  and "".join(c["source"]).startswith("# Step 3") and '"pip", "install"' in "".join(c["source"])]
    assert '"-c", "constraints.txt"' in install and "requirements-kaggle.txt" in install
    assert 'startswith("torch")' in install  # the torch line is left out: Kaggle's CUDA build stays


def test_floors_are_the_lower_bounds_and_ci_tests_them() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from floors import MODEL_STACK, floors
    finally:
        sys.path.pop(0)
    text = (ROOT / "requirements.txt").read_text()
    found = floors(text)
    assert set(found) == set(MODEL_STACK) == {"transformers", "accelerate", "bitsandbytes", "llguidance"}
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-") and Requirement(line).name in found:
            req = Requirement(line)
            assert req.specifier.contains(found[req.name]), req
            assert not req.specifier.contains(_below(found[req.name])), f"{req} allows less than its floor"
    printed = subprocess.run([sys.executable, "scripts/floors.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    assert printed.stdout.split() == [f"{name}=={version}" for name, version in found.items()]
    dev = (ROOT / "scripts" / "dev.sh").read_text()
    assert "scripts/floors.py" in dev and "-m floors" in dev
    assert "bash scripts/dev.sh floors" in (ROOT / ".ci" / "run").read_text()


def test_transformers_floor_has_what_the_prefix_cache_needs() -> None:
    from docgemma.llm.prefix_cache import unsupported

    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from floors import floors
    finally:
        sys.path.pop(0)
    assert floors((ROOT / "requirements.txt").read_text())["transformers"] in ("5.18", "5.18.0")
    assert unsupported() is None  # the installed (tested) version has activate_past_recording


def _below(version: str) -> str:
    """A version just under ``version`` (1.9 -> 1.8.999)."""
    parts = [int(p) for p in version.split(".")]
    while parts and parts[-1] == 0:
        parts.pop()
    parts[-1] -= 1
    return ".".join(map(str, parts)) + ".999"
