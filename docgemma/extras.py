"""Optional parts of the package, installed as extras, and the one message that says how to install one.

The MCP tool server and client (``docgemma mcp``, ``DOCGEMMA_TOOL_TRANSPORT=mcp``) need the official SDK at
``mcp>=2.3``. It is the ``mcp`` extra rather than a requirement because a Hugging Face Space installs
``gradio[oauth,mcp]`` beside requirements.txt and gradio 6's ``mcp`` extra needs ``mcp<2``: with the SDK in
requirements.txt no Space could build (tests/integration/test_platform_resolve.py resolves what each platform
installs). On a Space the SDK present is gradio's 1.x, which these modules cannot use: checked by version, not
only by import.
"""

from __future__ import annotations

import re
from importlib.metadata import PackageNotFoundError, version

#: extra name -> (the requirement it installs, as in requirements-<extra>.txt; what needs it)
EXTRAS: dict[str, tuple[str, str]] = {
    "mcp": ("mcp>=2.3,<3", "the MCP tool server and client (docgemma mcp, DOCGEMMA_TOOL_TRANSPORT=mcp)"),
}
_RANGE = re.compile(r"^([\w.-]+)>=(\d+)\.(\d+),<(\d+)$")  # the one form EXTRAS uses: name>=X.Y,<Z


class MissingExtraError(ImportError):
    """An optional part was used without its extra installed (or with a version it cannot use)."""


def install_hint(extra: str) -> str:
    requirement, purpose = EXTRAS[extra]
    return (f"{purpose} needs {requirement}: pip install -r requirements-{extra}.txt -c constraints.txt "
            f"(or pip install 'docgemma[{extra}]')")


def require_extra(extra: str) -> None:
    """Raise :class:`MissingExtraError` with the install command unless ``extra``'s requirement is satisfied."""
    match = _RANGE.match(EXTRAS[extra][0])
    assert match is not None, EXTRAS[extra]
    name, low, high = match[1], (int(match[2]), int(match[3])), int(match[4])
    try:
        installed = version(name)
    except PackageNotFoundError:
        raise MissingExtraError(f"{name} is not installed; {install_hint(extra)}") from None
    release = tuple(int(part) for part in re.findall(r"\d+", installed)[:2])
    if not (low <= release and release[0] < high):
        raise MissingExtraError(f"{name} {installed} is installed; {install_hint(extra)}")
