"""The package declares what it needs and how to start it."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest
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
    for name in ("requirements.txt", "requirements-dev.txt", "requirements-mcp.txt"):
        names = [Requirement(line).name.lower() for line in requirement_lines(name)]
        assert names and len(names) == len(set(names)), name


def test_mcp_is_an_extra_not_a_requirement() -> None:
    """A Space installs gradio[oauth,mcp], whose mcp extra needs mcp<2: the SDK at >=2.3 cannot be a requirement
    (tests/integration/test_platform_resolve.py resolves it); it is the ``mcp`` extra, declared in one file."""
    from docgemma.extras import EXTRAS

    assert "mcp" not in {Requirement(line).name for line in requirement_lines("requirements.txt")}
    assert "mcp" not in {Requirement(line).name for line in requirement_lines("requirements-server.txt")}
    assert requirement_lines("requirements-mcp.txt") == [EXTRAS["mcp"][0]]
    dynamic = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["dynamic"]
    assert dynamic["optional-dependencies"]["mcp"] == {"file": ["requirements-mcp.txt"]}


def test_mcp_client_starts_the_server_with_this_interpreter_and_the_given_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The stdio tool server is ``python -m docgemma mcp`` run by this interpreter, with exactly the environment
    the caller passed: the package is found as any ``python -m`` finds it, not through a patched PYTHONPATH."""
    import mcp.client.stdio

    from docgemma.tools.mcp_client import McpToolClient

    started: list[Any] = []

    def stdio_client(params: Any) -> Any:
        started.append(params)
        raise OSError("not started in this test")

    monkeypatch.setattr(mcp.client.stdio, "stdio_client", stdio_client)
    with pytest.raises(RuntimeError, match="did not start"):
        McpToolClient(env={"DOCGEMMA_BACKEND": "fake"}, allow_writes=False)
    [params] = started
    assert params.command == sys.executable
    assert params.args == ["-m", "docgemma", "mcp", "--transport", "stdio"]  # no --allow-writes when not allowed
    assert params.env == {"DOCGEMMA_BACKEND": "fake"}
