"""docs/architecture.md matches the code where it names it: every module or package path it names exists, the
LLM protocol methods it lists are exactly the protocol's, and every package and top-level module is described."""

from __future__ import annotations

import re
from pathlib import Path

from docgemma.llm.base import LLM

ROOT = Path(__file__).parents[2]
PACKAGE = ROOT / "docgemma"
DOC = ROOT / "docs" / "architecture.md"

#: A word in backticks: `docgemma/ui/`, `tools/args.py`, `registry.py`, `tools/ehr_tools.write_lookup`.
_CODE = re.compile(r"`([^`\s]+)`")
#: The protocol sentence: "Implement the `LLM` protocol (`llm/base.py`: `a`, `b`, ...)".
_PROTOCOL = re.compile(r"`LLM` protocol \(`llm/base\.py`: ([^)]*)\)")


def module_path(word: str) -> str | None:
    """The module or package path a backticked word names, or None when it names none (a URL, a data file)."""
    if word.startswith("/") or "://" in word:
        return None
    if ".py" in word:
        return word.split(".py")[0] + ".py"
    if word.endswith("/"):
        return word
    if "/" in word:
        head, _, last = word.rpartition("/")
        if "." in last:
            stem, _, suffix = last.partition(".")
            return None if suffix in {"json", "md", "txt", "sqlite", "conf", "toml", "yml", "yaml", "sh", "ini", "cfg",
                                                          "html", "css", "js", "csv", "ipynb", "gguf"} else (
                f"{head}/{stem}.py")
    return None


def named_paths(text: str) -> list[str]:
    """The module and package paths the page names (``tools/ehr_tools.write_lookup`` names ``tools/ehr_tools.py``)."""
    return [path for word in _CODE.findall(text) if (path := module_path(word)) is not None]


def resolves(path: str) -> bool:
    """A path the page names exists: from the repository root, from ``docgemma/``, or, for a bare file name in a
    table row about one package, somewhere inside ``docgemma/``."""
    if (ROOT / path).exists() or (PACKAGE / path).exists():
        return True
    if "/" not in path:
        return any(PACKAGE.rglob(path))
    return False


def missing_paths(text: str) -> list[str]:
    return [path for path in named_paths(text) if not resolves(path)]


def protocol_methods() -> set[str]:
    return {name for name in vars(LLM) if not name.startswith("_")}


def named_protocol_methods(text: str) -> set[str]:
    match = _PROTOCOL.search(text)
    assert match, "docs/architecture.md no longer lists the LLM protocol's methods"
    return set(re.findall(r"`(\w+)`", match.group(1)))


def subpackages() -> list[str]:
    return sorted(str(init.parent.relative_to(PACKAGE)) + "/" for init in PACKAGE.rglob("__init__.py")
                  if init.parent != PACKAGE)


def top_level_modules() -> list[str]:
    return sorted(module.name for module in PACKAGE.glob("*.py") if module.name != "__init__.py")


def unmentioned(text: str) -> list[str]:
    """Packages (``agent/nodes/``) and top-level modules (``config.py``) the page never names."""
    return [name for name in subpackages() + top_level_modules() if f"`{name}" not in text
            and f"`docgemma/{name}" not in text]


def test_every_path_the_page_names_exists() -> None:
    assert missing_paths(DOC.read_text(encoding="utf-8")) == []


def test_the_page_lists_exactly_the_llm_protocol() -> None:
    assert named_protocol_methods(DOC.read_text(encoding="utf-8")) == protocol_methods()


def test_every_package_and_top_level_module_is_described() -> None:
    assert unmentioned(DOC.read_text(encoding="utf-8")) == []


def test_the_checks_catch_drift() -> None:
    """The checks fail on what the page used to say: a protocol the code does not have, a module that is gone,
    a package left out."""
    drifted = "Implement the `LLM` protocol (`llm/base.py`: `generate`, `generate_json`, `stream`)"
    assert named_protocol_methods(drifted) - protocol_methods() == {"generate", "stream"}
    assert missing_paths("see `docgemma/ui/layout.py` and `agent/planner.py`, `tools/args.py`") == [
        "docgemma/ui/layout.py", "agent/planner.py"]
    assert missing_paths("`tools/ehr_tools.write_lookup` and `tools/ehr_tools.nothing_here`") == []
    assert missing_paths("`tools/gone.write_lookup`") == ["tools/gone.py"]
    assert "agent/nodes/" in unmentioned("`agent/` only") and "config.py" in unmentioned("`agent/` only")
