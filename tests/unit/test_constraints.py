"""constraints.txt is the tested set of versions: it pins every runtime requirement within its range, leaves
the platforms' torch alone, and is what this test run has installed."""

from __future__ import annotations

import contextlib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).parents[2]
PLATFORM_PROVIDED = {"torch", "sympy", "mpmath", "networkx", "triton"}


def _lines(path: Path) -> list[str]:
    lines = (line.split("#")[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("-")]


def requirements(file: str = "requirements.txt") -> list[Requirement]:
    reqs = [Requirement(line) for line in _lines(ROOT / file)]
    return [r for r in reqs if (r.marker is None or r.marker.evaluate()) and r.name != "torch"]


def pins() -> dict[str, str]:
    found: dict[str, str] = {}
    for line in _lines(ROOT / "constraints.txt"):
        name, _, pinned = line.partition("==")
        assert pinned and not any(c in pinned for c in "<>=!~*"), f"not an exact pin: {line}"
        found[canonicalize_name(name)] = pinned
    return found


def test_every_runtime_requirement_is_pinned_within_its_range() -> None:
    pinned = pins()
    for req in requirements():
        name = canonicalize_name(req.name)
        assert name in pinned, f"{req.name} has no pin in constraints.txt"
        assert req.specifier.contains(pinned[name], prereleases=True), f"{name}=={pinned[name]} outside {req}"


def test_optional_llamacpp_requirement_is_pinned_and_the_installed_one() -> None:
    """requirements-llamacpp.txt (the optional llama.cpp backend) pins exactly the constraints.txt version;
    where it is installed (``scripts/dev.sh test`` installs it), that version is the one running."""
    pinned = pins()
    for req in requirements("requirements-llamacpp.txt"):
        name = canonicalize_name(req.name)
        assert name in pinned and str(req.specifier) == f"=={pinned[name]}", f"{req} vs constraints.txt"
        with contextlib.suppress(PackageNotFoundError):  # optional: bash scripts/dev.sh setup-llamacpp
            assert version(req.name) == pinned[name]


def test_transformers_has_an_upper_bound() -> None:
    (transformers,) = [r for r in requirements() if r.name == "transformers"]
    assert any(spec.operator in ("<", "<=", "==", "~=") for spec in transformers.specifier)


def test_platform_torch_is_not_pinned() -> None:
    pinned = pins()
    assert not PLATFORM_PROVIDED & set(pinned) and not any(n.startswith("nvidia-") for n in pinned)


@pytest.mark.parametrize("req", requirements(), ids=lambda r: r.name)
def test_installed_runtime_versions_are_the_pinned_ones(req: Requirement) -> None:
    """The suite runs on the pinned set: install with ``-c constraints.txt`` (or update the pin)."""
    try:
        installed = version(req.name)
    except PackageNotFoundError:
        pytest.fail(f"{req.name} is not installed: pip install -r requirements.txt -c constraints.txt")
    assert installed == pins()[canonicalize_name(req.name)]


def test_space_gradio_is_the_pinned_one() -> None:
    """A Space installs the gradio of ``sdk_version`` over requirements.txt: it must be the tested one."""
    front = (ROOT / "README.md").read_text().split("---")[1]
    (sdk_version,) = [line.split(":", 1)[1].strip() for line in front.splitlines() if line.startswith("sdk_version:")]
    assert sdk_version == pins()["gradio"]
