"""Every platform's install resolves, with the tested versions (constraints.txt), for the platform's Python:
pip resolves exactly what each one installs (scripts/platform_resolve.py: ``pip install --dry-run --report``
against the package index; nothing is installed). Needs the index (PyPI): skipped, saying so, only when it
cannot be reached. Fails on a conflict (as the Space had: gradio 6.31's mcp extra needs mcp<2, requirements.txt
needed mcp>=2.3) and on any version outside the tested set."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import platform_resolve as pr  # noqa: E402


def resolved_or_skip(run: Callable[[], Any]) -> Any:
    reason = pr.index_unreachable()
    if reason is not None:
        pytest.skip(f"the package index cannot be reached, so no platform's install can be resolved: {reason}")
    try:
        return run()
    except pr.ResolveError as exc:
        if exc.unreachable:
            pytest.skip(f"the package index cannot be reached, so no platform's install can be resolved: {exc}")
        raise


@pytest.fixture(scope="module")
def platforms() -> dict[str, dict[str, str]]:
    return resolved_or_skip(pr.platforms)


@pytest.fixture(scope="module")
def space() -> tuple[dict[str, str], dict[str, str]]:
    return resolved_or_skip(pr.space_runs)


@pytest.mark.parametrize("name", ["kaggle", "docker (requirements-server.txt)", "docker (requirements.txt)"])
def test_platform_installs_only_tested_versions(platforms: dict[str, dict[str, str]], name: str) -> None:
    assert pr.untested(platforms[name]) == [], f"{name}: regenerate constraints.txt after a passing run"


def test_space_second_run_adds_and_changes_nothing(space: tuple[dict[str, str], dict[str, str]]) -> None:
    """requirements.txt + gradio[oauth,mcp]==<sdk_version> + spaces, over what pre-requirements.txt installed."""
    first, second = space
    changed = {n: v for n, v in second.items() if first.get(n) != v}
    assert changed == {}, "python scripts/platform_resolve.py --write-space"


def test_space_installs_the_tested_versions(space: tuple[dict[str, str], dict[str, str]],
                                            platforms: dict[str, dict[str, str]]) -> None:
    """Every package both install is at constraints.txt's version; the Space's others are the builder's own
    (gradio's oauth and mcp extras, spaces: nothing requirements.txt pulls in), and mcp is gradio's 1.x."""
    first = pr.ours(space[0])
    builder_only = frozenset(set(first) - set(platforms["docker (requirements.txt)"]))
    assert {"spaces", "authlib", "itsdangerous"} <= builder_only
    problems = [p for p in pr.untested(first, builder_only) if p.split("==")[0] not in pr.EXTRA_ONLY]
    assert problems == []
    assert first["mcp"].startswith("1.")  # gradio's; the docgemma[mcp] extra refuses it (docgemma/extras.py)
    assert first["gradio"] == pr.front_matter("sdk_version")
