"""An optional part used without its extra says how to install it, in one line (no ImportError traceback);
a Space's mcp 1.x (from gradio's own mcp extra) counts as missing, since the server needs 2.3."""

from __future__ import annotations

import pytest

from docgemma import __main__ as cli
from docgemma import extras
from docgemma.extras import MissingExtraError, require_extra


def test_installed_mcp_satisfies_the_extra() -> None:
    require_extra("mcp")  # the suite installs requirements-mcp.txt (scripts/dev.sh test)


@pytest.mark.parametrize("installed", ["1.26.0", "3.0.0"])
def test_an_mcp_the_server_cannot_use_names_the_install_command(monkeypatch: pytest.MonkeyPatch,
                                                                installed: str) -> None:
    monkeypatch.setattr(extras, "version", lambda name: installed)
    with pytest.raises(MissingExtraError, match=rf"mcp {installed} is installed.*requirements-mcp.txt"):
        require_extra("mcp")


def test_docgemma_mcp_without_the_extra_is_one_error_line(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    def missing(name: str) -> str:
        raise extras.PackageNotFoundError(name)

    monkeypatch.setattr(extras, "version", missing)
    assert cli.main(["mcp"], prog="docgemma") == 2
    err = capsys.readouterr().err
    assert err.startswith("docgemma: error: mcp is not installed;") and "docgemma[mcp]" in err
    assert len(err.strip().splitlines()) == 1
