"""The package declares what it needs and how to start it."""

from __future__ import annotations

import importlib
from pathlib import Path

import tomllib
from packaging.requirements import Requirement

ROOT = Path(__file__).parents[2]


def requirement_lines(name: str) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in (ROOT / name).read_text().splitlines())
    return [line for line in lines if line]


def test_pyproject_declares_build_system_dependencies_and_console_script() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["build-system"]["build-backend"] == "setuptools.build_meta"
    assert "dependencies" in project["project"]["dynamic"]
    dynamic = project["tool"]["setuptools"]["dynamic"]
    assert dynamic["dependencies"]["file"] == ["requirements.txt"]  # one list, also used by scripts/dev.sh
    assert "version" in project["project"]["dynamic"] and "version" not in project["project"]
    assert dynamic["version"] == {"attr": "docgemma.__version__"}  # what `docgemma --version` prints
    module, _, attr = project["project"]["scripts"]["docgemma"].partition(":")
    assert callable(getattr(importlib.import_module(module), attr))


def test_requirement_files_are_valid_requirements() -> None:
    """setuptools reads these files as the package's dependencies: every line must parse."""
    for name in ("requirements.txt", "requirements-dev.txt"):
        names = [Requirement(line).name.lower() for line in requirement_lines(name)]
        assert names and len(names) == len(set(names)), name
    assert "mcp" in {Requirement(line).name for line in requirement_lines("requirements.txt")}


def test_mcp_client_does_not_patch_the_python_path() -> None:
    source = (ROOT / "docgemma" / "tools" / "mcp_client.py").read_text()
    assert "PYTHONPATH" not in source and "sys.executable" in source
