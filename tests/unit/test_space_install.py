"""What a Hugging Face Space installs and runs on: the torch of pre-requirements.txt (Spaces install that file
before requirements.txt; nothing else reads it) and the Python of the README's front matter, against what the
platforms document (docs/hub/spaces-zerogpu.md and spaces-dependencies.md in huggingface/hub-docs, August 2026):

* ZeroGPU supports torch 2.8.0, 2.9.1, 2.10.0 and 2.11.0, and Python 3.12.12 or 3.10.13 (transformers 5, pinned
  in constraints.txt, needs Python >= 3.11: 3.12.12 it is).
* A GPU Space's driver must run the torch build: a CUDA 12.x build runs on any 12-series driver; PyPI's default
  Linux torch is a CUDA 13 build (checked for 2.11.0 and 2.13.0: it requires cuda-toolkit 13.0). CUDA 12.8 is the
  first with kernels for ZeroGPU's Blackwell GPUs (sm_120).
"""

from __future__ import annotations

import re
from importlib.metadata import distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).parents[2]
ZEROGPU_TORCH = {"2.8.0", "2.9.1", "2.10.0", "2.11.0"}
ZEROGPU_PYTHON = {"3.12.12", "3.10.13"}
LOCAL_CPU_TORCH = "2.13.0"  # scripts/dev.sh installs this CPU wheel before requirements.txt


def front_matter(key: str) -> str:
    front = (ROOT / "README.md").read_text().split("---")[1]
    (value,) = [line.split(":", 1)[1].strip().strip('"') for line in front.splitlines() if line.startswith(f"{key}:")]
    return value


def space_torch() -> tuple[Version, str]:
    """The pinned torch of pre-requirements.txt and the index it comes from."""
    lines = [line.strip() for line in (ROOT / "pre-requirements.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    (index,) = [line.split(None, 1)[1] for line in lines if line.startswith("--extra-index-url")]
    (pin,) = [Requirement(line) for line in lines if line.startswith("torch")]
    assert pin.name == "torch" and len(pin.specifier) == 1
    (spec,) = pin.specifier
    assert spec.operator == "=="
    return Version(spec.version), index


def test_the_space_python_is_one_zerogpu_runs() -> None:
    assert front_matter("python_version") in ZEROGPU_PYTHON
    assert front_matter("app_file") == "app.py"


def test_the_space_torch_is_a_zerogpu_version_built_for_cuda_12_8() -> None:
    torch, index = space_torch()
    assert torch.public in ZEROGPU_TORCH
    assert torch.local == "cu128" and index == "https://download.pytorch.org/whl/cu128"


def test_requirements_keep_the_space_torch_and_the_local_cpu_torch() -> None:
    """requirements.txt is installed after the pin on a Space and after the CPU wheel here: its torch range, and
    every installed package's own torch requirement, admit both, so pip replaces neither."""
    torch, _ = space_torch()
    lines = (line.split("#", 1)[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines())
    (required,) = [Requirement(line) for line in lines if line and re.match(r"torch\b", line)]
    for version in (torch.public, LOCAL_CPU_TORCH):
        assert required.specifier.contains(version), (required, version)
    for dist in distributions():
        for text in dist.requires or []:
            requirement = Requirement(text)
            if requirement.name == "torch" and (requirement.marker is None or requirement.marker.evaluate()):
                assert requirement.specifier.contains(torch.public), (dist.metadata["Name"], text)


def test_the_space_pins_are_the_tested_versions() -> None:
    """pre-requirements.txt pins every package a Space installs (the builder's second run reads no constraints
    file): each one constraints.txt also pins is at that version, except mcp (an extra here; gradio's own mcp
    extra brings 1.x to a Space). tests/integration/test_platform_resolve.py resolves both runs on PyPI."""
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    import platform_resolve as pr

    space, tested = pr.pins(ROOT / "pre-requirements.txt"), pr.pins(ROOT / "constraints.txt")
    assert len(space) > 100 and space["gradio"] == front_matter("sdk_version")
    differ = {n: (v, tested[n]) for n, v in space.items() if n in tested and tested[n] != v and n not in pr.EXTRA_ONLY}
    assert differ == {}, "python scripts/platform_resolve.py --write-space"
