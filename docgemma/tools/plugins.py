"""Tools installed by other distributions: each names its tool in the ``docgemma.tools`` entry-point group, as
a ``ToolSpec`` or a module shaped like a ``tools/catalog/`` module (with ``SPEC``)::

    [project.entry-points."docgemma.tools"]
    order_lab_test = "my_clinic.lab_tool"

The app's registry (``registry.installed_registry``) adds them after the catalog, bound like every other tool."""

from __future__ import annotations

from importlib import metadata

from docgemma.tools.spec import ToolSpec

#: The entry-point group a distribution names its tools in.
GROUP = "docgemma.tools"


class PluginError(RuntimeError):
    """An installed tool's entry point does not name a tool (the app refuses to start rather than drop it)."""


def installed_tools() -> tuple[ToolSpec, ...]:
    """The tools the installed distributions name in :data:`GROUP`, by entry-point name."""
    specs = []
    for entry in sorted(metadata.entry_points(group=GROUP), key=lambda e: e.name):
        loaded = entry.load()
        spec = getattr(loaded, "SPEC", loaded)
        if not isinstance(spec, ToolSpec):
            raise PluginError(f"entry point {entry.name} = {entry.value} ({GROUP}) is neither a ToolSpec nor a "
                              "module with SPEC")
        specs.append(spec)
    return tuple(specs)
