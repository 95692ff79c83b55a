"""What each platform installs, resolved by pip against the package index without installing anything
(``pip install --dry-run --ignore-installed --report``) for the platform's Python on Linux x86_64 wheels.

    python scripts/platform_resolve.py                 # resolve every platform; print what differs from constraints.txt
    python scripts/platform_resolve.py --write-space   # regenerate the pinned block of pre-requirements.txt

Platforms (tests/integration/test_platform_resolve.py runs each and fails on a conflict or an untested version):

* **space**: a Hugging Face Space builds in two pip runs: ``pre-requirements.txt``, then ``requirements.txt``
  together with ``gradio[oauth,mcp]==<sdk_version>`` and ``spaces``, on the front matter's ``python_version``.
  The second run keeps what the first installed whenever it satisfies; so the first installs the tested
  versions (a generated, fully pinned block) and the second must add or change nothing.
* **kaggle**: the notebook's step 3: requirements.txt without its torch line, ``-c constraints.txt``, Kaggle's
  Python; Kaggle's own CUDA torch is stood in for by PyPI's.
* **docker**: deploy/Dockerfile (python:3.12-slim): requirements-server.txt ``-c constraints.txt`` (the default
  image), and requirements.txt after the CPU torch (``--build-arg REQUIREMENTS=requirements.txt``).

torch comes from download.pytorch.org on a Space and in the full Docker image; the resolve uses PyPI's torch of
the same version (only PyPI need be reachable). torch and what it pulls in (CUDA libraries, triton, sympy, ...)
are the platform's, outside the tested set (constraints.txt leaves them out for the same reason).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Kaggle's notebook image runs Python 3.11 (its Docker image, kaggle/docker-python, 2025-2026).
KAGGLE_PYTHON = "3.11"
DOCKER_PYTHON = "3.12"  # deploy/Dockerfile: FROM python:3.12-slim
DOCKER_CPU_TORCH = "2.13.0"  # deploy/Dockerfile with REQUIREMENTS=requirements.txt
#: Packages torch brings (its CUDA build's libraries included): the platform's, never pinned by us.
TORCH_STACK = re.compile(r"^(torch|triton|sympy|mpmath|networkx|setuptools|nvidia-.*|cuda-.*)$")
#: Pins of constraints.txt that only an extra needs (requirements-mcp.txt). A Space never installs the extra:
#: gradio's own mcp extra brings mcp 1.x there (docgemma/extras.py refuses it with the install command).
EXTRA_ONLY = {"mcp", "mcp-types"}
#: What the Space builder adds beside requirements.txt.
SPACE_BUILDER = ("gradio[oauth,mcp]=={sdk}", "spaces")
BEGIN, END = "# --- BEGIN pinned (python scripts/platform_resolve.py --write-space) ---", "# --- END pinned ---"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_lines(path: Path) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("-")]


def pins(path: Path) -> dict[str, str]:
    """``name==version`` lines of a requirements or constraints file (local versions such as +cu128 dropped)."""
    found = {}
    for line in requirement_lines(path):
        name, sep, pinned = line.partition("==")
        if sep:
            found[canonical(name.split("[")[0])] = pinned.split("+")[0]
    return found


def front_matter(key: str) -> str:
    front = (ROOT / "README.md").read_text().split("---")[1]
    (value,) = [line.split(":", 1)[1].strip().strip('"') for line in front.splitlines() if line.startswith(f"{key}:")]
    return value


class ResolveError(RuntimeError):
    """pip found no consistent set (a conflict), or could not reach the index (``unreachable``)."""

    def __init__(self, message: str, unreachable: bool) -> None:
        super().__init__(message)
        self.unreachable = unreachable


UNREACHABLE = ("Failed to establish a new connection", "Temporary failure in name resolution", "Network is unreachable",
               "Max retries exceeded", "Could not fetch URL", "ProxyError", "ConnectTimeout")


def index_unreachable() -> str | None:
    """Why the package index cannot be reached (None when it can): pip lists gradio's versions from it."""
    done = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "gradio"], capture_output=True, text=True,
                          timeout=300)
    if done.returncode == 0 and "Available versions" in done.stdout:
        return None
    return " ".join(line for line in done.stderr.splitlines() if "is ignored" not in line)[-500:] or "no versions listed"


def resolve(python: str, requirements: Sequence[str], constraints: dict[str, str] | None = None) -> dict[str, str]:
    """The versions pip would install, on a clean Linux x86_64 CPython ``python``: canonical name -> version."""
    platforms = [f"--platform=manylinux_2_{minor}_x86_64" for minor in range(17, 37)] + ["--platform=manylinux2014_x86_64"]
    with tempfile.TemporaryDirectory() as tmp:
        report, args = Path(tmp) / "report.json", list(requirements)
        if constraints is not None:
            (Path(tmp) / "c.txt").write_text("".join(f"{n}=={v}\n" for n, v in sorted(constraints.items())))
            args += ["-c", str(Path(tmp) / "c.txt")]
        command = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                   "--report", str(report), "--python-version", python, "--implementation", "cp",
                   "--only-binary=:all:", *platforms, *args]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            error = "\n".join(line for line in done.stderr.splitlines() if "is ignored" not in line)
            raise ResolveError(error.strip()[-3000:], unreachable=any(s in error for s in UNREACHABLE))
        installs = json.loads(report.read_text())["install"]
    return {canonical(i["metadata"]["name"]): i["metadata"]["version"] for i in installs}


def ours(resolved: dict[str, str]) -> dict[str, str]:
    return {name: v for name, v in resolved.items() if not TORCH_STACK.match(name)}


def space_torch() -> str:
    (torch,) = [line for line in requirement_lines(ROOT / "pre-requirements.txt") if line.startswith("torch==")]
    return torch.split("+")[0]  # PyPI's build of the same version stands in for the cu128 index's


def space_second_run() -> list[str]:
    return ["-r", "requirements.txt", *(r.format(sdk=front_matter("sdk_version")) for r in SPACE_BUILDER)]


def space_lock() -> dict[str, str]:
    """What the Space should pin: its second run resolved on the tested set (constraints.txt less the extras)."""
    tested = {n: v for n, v in pins(ROOT / "constraints.txt").items() if n not in EXTRA_ONLY}
    return ours(resolve(front_matter("python_version"), [space_torch(), *space_second_run()], tested))


def space_runs() -> tuple[dict[str, str], dict[str, str]]:
    """The Space's two pip runs: pre-requirements.txt alone, then the second with the first's result installed
    (modelled as constraints: pip keeps an installed version that satisfies)."""
    python = front_matter("python_version")
    first = resolve(python, [space_torch(), *(f"{n}=={v}" for n, v in pins(ROOT / "pre-requirements.txt").items()
                                              if n != "torch")])
    second = resolve(python, space_second_run(), first)
    return first, second


def write_space_lock() -> None:
    path = ROOT / "pre-requirements.txt"
    text = path.read_text()
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    block = "".join(f"{name}=={version}\n" for name, version in sorted(space_lock().items()))
    path.write_text(f"{head}{BEGIN}\n{block}{END}{tail}")


def platforms() -> dict[str, dict[str, str]]:
    """Every platform but the Space: name -> the versions it installs."""
    tested = pins(ROOT / "constraints.txt")
    kaggle = [line for line in (ROOT / "requirements.txt").read_text().splitlines()
              if not line.split("#")[0].strip().lower().startswith("torch")]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", dir=ROOT, delete=False) as handle:
        handle.write("\n".join(kaggle) + "\n")  # the notebook's requirements-kaggle.txt
    try:
        return {
            "kaggle": ours(resolve(KAGGLE_PYTHON, ["torch", "-r", handle.name], tested)),
            "docker (requirements-server.txt)": ours(resolve(DOCKER_PYTHON, ["-r", "requirements-server.txt"], tested)),
            "docker (requirements.txt)": ours(resolve(DOCKER_PYTHON, [f"torch=={DOCKER_CPU_TORCH}", "-r",
                                                                      "requirements.txt"], tested)),
        }
    finally:
        Path(handle.name).unlink()


def untested(resolved: dict[str, str], allowed_new: frozenset[str] = frozenset()) -> list[str]:
    """Each package resolved at a version the tested set does not hold (or not in it, unless allowed)."""
    tested = pins(ROOT / "constraints.txt")
    return [f"{n}=={v} (tested: {tested.get(n, 'not in constraints.txt')})" for n, v in sorted(resolved.items())
            if (n in tested and tested[n] != v) or (n not in tested and n not in allowed_new)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write-space", action="store_true", help="regenerate pre-requirements.txt's pinned block")
    if parser.parse_args().write_space:
        write_space_lock()
        print("pre-requirements.txt: pinned block regenerated")
        return 0
    for name, resolved in platforms().items():
        print(f"{name}: {len(resolved)} packages; untested: {untested(resolved) or 'none'}")
    first, second = space_runs()
    changed = {n: v for n, v in second.items() if first.get(n) != v}
    print(f"space: {len(ours(first))} packages; second run changes: {changed or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
