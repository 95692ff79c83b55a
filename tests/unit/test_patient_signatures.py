"""One patient reference across the boundaries (issue 29): no public function of the workspace, the runtime or the
page takes a patient as a loose ``patient_id``/``patient_name`` string (a ``PatientRef`` carries it; a record id
read from text is a ``PatientId``, which only the workspace resolves)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "docgemma"
FILES = [ROOT / "workspace.py", ROOT / "runtime.py", *sorted((ROOT / "ui").rglob("*.py"))]
LOOSE = {"patient_id", "patient_name", "patient_ids", "patient_names"}


def _loose_parameters(tree: ast.Module) -> list[str]:
    """``name(param)`` for every public function or method with a patient parameter annotated as a plain string."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name.startswith("_"):
            continue
        args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        for arg in args:
            annotation = ast.unparse(arg.annotation) if arg.annotation else "str"  # unannotated: taken as a string
            if arg.arg in LOOSE and "str" in annotation.replace("'", "").replace('"', "").split(" | "):
                found.append(f"{node.name}({arg.arg}: {annotation})")
    return found


def test_no_public_function_takes_a_patient_as_a_plain_string() -> None:
    loose = {str(p.relative_to(ROOT)): found for p in FILES
             if (found := _loose_parameters(ast.parse(p.read_text(encoding="utf-8"))))}
    assert loose == {}


def test_the_scan_finds_a_loose_patient_parameter() -> None:
    tree = ast.parse("def show(patient_id: str, name: str) -> None: ...\n"
                     "def pick(patient_name: str | None = None) -> None: ...\n"
                     "def _inner(patient_id: str) -> None: ...\n")
    assert _loose_parameters(tree) == ["show(patient_id: str)", "pick(patient_name: str | None)"]
