"""Draw docgemma's module import graph by layer, and find imports that run back up or go round in a circle.

    python scripts/import_graph.py              # text: layers, modules, upward imports, cycles
    python scripts/import_graph.py --mermaid    # a mermaid flowchart of the layers (arrows: imports)
    python scripts/import_graph.py --check      # exit 1 on any upward import or cycle (as the test does)

Layers, lowest first: a module may import its own layer and those below, never one above. Every import
counts, lazy ones inside functions and ``TYPE_CHECKING`` ones included: a lazy import is still a dependency.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "docgemma"

#: (floor, name, module prefixes), lowest floor first. A module belongs to the longest matching prefix.
LAYERS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (0, "ground", ("docgemma", "docgemma.config", "docgemma.images", "docgemma.image_store", "docgemma.clinical",
                   "docgemma.fhir", "docgemma.exposure", "docgemma.browser_guard", "docgemma.private_files",
                   "docgemma.attempt_limit", "docgemma.http_client", "docgemma.extras")),
    (1, "ehr", ("docgemma.ehr",)),
    (1, "llm", ("docgemma.llm",)),
    (2, "tools", ("docgemma.tools",)),
    (3, "agent", ("docgemma.agent",)),
    (4, "app", ("docgemma.runtime", "docgemma.workspace", "docgemma.ops")),
    (5, "ui", ("docgemma.ui",)),
    # The measurement wing stands beside the UI, above the product it measures; the product never imports it.
    (5, "eval", ("docgemma.eval",)),
    (6, "serve", ("docgemma.serve",)),
    (7, "entry", ("docgemma.__main__",)),
)


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package by dotted name."""
    out = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def layer_of(module: str) -> tuple[int, str]:
    """The (floor, name) of ``module``: the layer with the longest prefix that matches it."""
    best: tuple[int, int, str] | None = None
    for floor, name, prefixes in LAYERS:
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), floor, name)
    assert best is not None, module
    return best[1], best[2]


def _imported(tree: ast.AST, module: str, is_package: bool) -> Iterator[str]:
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def graph(root: Path = ROOT) -> dict[str, set[str]]:
    """module -> the package modules it imports (``from a import b`` counts as ``a.b`` when that is a module)."""
    mods = modules(root)
    packages = {name for name, path in mods.items() if path.name == "__init__.py"}
    edges: dict[str, set[str]] = {}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(), str(path))
        targets = {t for t in _imported(tree, name, path.name == "__init__.py") if t in mods and t != name}
        # `from docgemma.agent import prompts` yields both docgemma.agent and docgemma.agent.prompts: the
        # module is the import, the package only the way to it (its __init__ is empty or re-exports).
        edges[name] = {t for t in targets if t != PACKAGE and not (t in packages and any(
            o.startswith(t + ".") for o in targets))}
    return edges


def upward(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Imports from a lower floor to a higher one."""
    return sorted((a, b) for a, targets in edges.items() for b in targets if layer_of(a)[0] < layer_of(b)[0])


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def layer_edges(edges: dict[str, set[str]]) -> dict[tuple[str, str], int]:
    """Imports counted between layers (a layer importing itself is left out)."""
    out: dict[tuple[str, str], int] = defaultdict(int)
    for a, targets in edges.items():
        for b in targets:
            la, lb = layer_of(a)[1], layer_of(b)[1]
            if la != lb:
                out[(la, lb)] += 1
    return dict(out)


def text(edges: dict[str, set[str]]) -> str:
    lines = []
    by_layer: dict[tuple[int, str], list[str]] = defaultdict(list)
    for name in edges:
        by_layer[layer_of(name)].append(name)
    for (floor, layer), names in sorted(by_layer.items(), reverse=True):
        lines.append(f"floor {floor} {layer}: {len(names)} modules")
        for name in sorted(names):
            below = sorted(t.removeprefix("docgemma.") for t in edges[name] if layer_of(t)[1] != layer)
            lines.append(f"  {name.removeprefix('docgemma.') or 'docgemma'}" + (f" -> {', '.join(below)}" if below else ""))
    up, circles = upward(edges), cycles(edges)
    lines.append(f"upward imports: {len(up)}")
    lines.extend(f"  {a} ({layer_of(a)[1]}) -> {b} ({layer_of(b)[1]})" for a, b in up)
    lines.append(f"cycles: {len(circles)}")
    lines.extend("  " + " <-> ".join(c) for c in circles)
    return "\n".join(lines)


def mermaid(edges: dict[str, set[str]]) -> str:
    lines = ["flowchart TD"]
    floors = {name: floor for floor, name, _ in LAYERS}
    for (a, b), count in sorted(layer_edges(edges).items()):
        style = "-.->|UP " if floors[a] < floors[b] else "-->|"
        lines.append(f"  {a} {style}{count}| {b}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mermaid", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    edges = graph()
    print(mermaid(edges) if args.mermaid else text(edges))
    return 1 if args.check and (upward(edges) or cycles(edges)) else 0


if __name__ == "__main__":
    sys.exit(main())
