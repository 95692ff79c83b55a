"""Layers point one way: ground ← ehr/llm ← tools ← agent ← app ← ui ← serve ← entry, no cycles."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).parents[2]


def import_graph() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "scripts" / "import_graph.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["import_graph"] = module
    spec.loader.exec_module(module)
    return module


def test_no_import_runs_back_up() -> None:
    graph = import_graph()
    edges = graph.graph()
    assert graph.upward(edges) == []


def test_no_import_cycle() -> None:
    graph = import_graph()
    assert graph.cycles(graph.graph()) == []


def test_the_graph_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    """The checker itself: a lazy import inside a function and a TYPE_CHECKING one both count."""
    graph = import_graph()
    pkg = tmp_path / "docgemma"
    (pkg / "ehr").mkdir(parents=True)
    (pkg / "agent").mkdir()
    for init in (pkg / "__init__.py", pkg / "ehr" / "__init__.py", pkg / "agent" / "__init__.py"):
        init.write_text("")
    (pkg / "ehr" / "a.py").write_text("def f():\n    from docgemma.agent import b\n")
    (pkg / "agent" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from docgemma.ehr import a\n")
    edges = graph.graph(tmp_path)
    assert graph.upward(edges) == [("docgemma.ehr.a", "docgemma.agent.b")]
    assert graph.cycles(edges) == [["docgemma.agent.b", "docgemma.ehr.a"]]


def test_every_module_has_a_layer() -> None:
    graph = import_graph()
    for name in graph.modules():
        _floor, layer = graph.layer_of(name)
        assert layer != "ground" or name in (
            "docgemma", "docgemma.config", "docgemma.images", "docgemma.image_store", "docgemma.fhir",
            "docgemma.exposure", "docgemma.browser_guard", "docgemma.private_files", "docgemma.attempt_limit",
            "docgemma.http_client", "docgemma.extras") or name.startswith("docgemma.clinical"), name


def test_the_ui_reaches_the_record_only_through_the_workspace() -> None:
    """The web UI is layout over the workspace: it imports no record (ehr) module, not even for a type."""
    graph = import_graph()
    assert [(a, b) for a, targets in graph.graph().items() if graph.layer_of(a)[1] == "ui"
            for b in targets if graph.layer_of(b)[1] == "ehr"] == []


def test_the_ui_assembles_nothing() -> None:
    """The application is built in ``docgemma/serve.py``: no ui module builds the model, the record, the tools or
    the conversation store (``runtime``, ``ops.conversation_store``) — it lays the page out over the workspace it is given."""
    graph = import_graph()
    assembly = {"docgemma.runtime", "docgemma.ops.conversation_store", "docgemma.ops.listen", "docgemma.llm.platform"}
    assert [(a, b) for a, targets in graph.graph().items() if graph.layer_of(a)[1] == "ui"
            for b in targets if b in assembly] == []


def product_imports_of_eval(root: Path = ROOT) -> list[tuple[str, str]]:
    """Imports of the measurement wing (eval/) by anything but the wing itself and the CLI."""
    graph = import_graph()
    return sorted((a, b) for a, targets in graph.graph(root).items() if graph.layer_of(a)[1] not in ("eval", "entry")
                  for b in targets if graph.layer_of(b)[1] == "eval")


def test_the_product_never_imports_the_measurement_wing(tmp_path: Path) -> None:
    """eval/ measures the product and may import it; nothing of the product imports eval/ (only the CLI does),
    not even the UI beside it on the same floor."""
    assert product_imports_of_eval() == []
    pkg = tmp_path / "docgemma"
    for sub in ("ui", "eval"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "eval" / "m.py").write_text("from docgemma.ui import page\n")
    (pkg / "ui" / "page.py").write_text("def f():\n    from docgemma.eval import m\n")
    assert product_imports_of_eval(tmp_path) == [("docgemma.ui.page", "docgemma.eval.m")]


def ui_imports_below_the_workspace(root: Path = ROOT) -> list[tuple[str, str]]:
    """Imports by a ui module of the agent, the tools, the record or the model: the page reads the workspace's
    public types only (``docgemma/workspace.py``'s ``__all__``)."""
    graph = import_graph()
    return sorted((a, b) for a, targets in graph.graph(root).items() if graph.layer_of(a)[1] == "ui"
                  for b in targets if graph.layer_of(b)[1] in ("agent", "tools", "ehr", "llm"))


def test_the_ui_imports_only_the_workspace_of_the_layers_below_it(tmp_path: Path) -> None:
    assert ui_imports_below_the_workspace() == []
    pkg = tmp_path / "docgemma"
    for sub in ("ui", "tools", "agent"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "tools" / "registry.py").write_text("")
    (pkg / "agent" / "state.py").write_text("")
    (pkg / "ui" / "page.py").write_text("from docgemma.tools import registry\n"
                                        "def f():\n    from docgemma.agent.state import PatientRef\n")
    assert ui_imports_below_the_workspace(tmp_path) == [("docgemma.ui.page", "docgemma.agent.state"),
                                                        ("docgemma.ui.page", "docgemma.tools.registry")]


def test_the_workspace_exports_what_the_ui_imports_of_it() -> None:
    """Every name a ui module takes from the workspace is one of its public types (``__all__``)."""
    import ast

    import docgemma.workspace as workspace

    taken = {alias.name for path in (ROOT / "docgemma" / "ui").glob("*.py")
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.ImportFrom) and node.module == "docgemma.workspace" for alias in node.names}
    assert taken and taken <= set(workspace.__all__), taken - set(workspace.__all__)
