"""Functions stay small enough to read at once: none in ``docgemma/`` is over 60 lines (data tables are
assignments, not functions, so they do not count)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "docgemma"
LIMIT = 60


def long_functions(root: Path = ROOT) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > LIMIT:
                    out.append(f"{path.relative_to(root.parent)}:{node.lineno} {node.name} ({length} lines)")
    return out


def test_no_function_is_over_60_lines() -> None:
    assert long_functions() == []


def test_the_check_sees_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    (tmp_path / "m.py").write_text(f"def long():\n{body}\n")
    assert long_functions(tmp_path) == [f"{tmp_path.name}/m.py:1 long ({LIMIT + 1} lines)"]
