"""The web app serves the record beyond loopback only behind a login, as ``ehr serve`` and the MCP server do: it
started on 0.0.0.0 with no ``DOCGEMMA_AUTH`` and anyone on the network read and wrote the record. The one
exception is asked for explicitly (``DOCGEMMA_PUBLIC_DEMO=on``: a public demo Space), and only over the
synthetic demo record, with a notice on the page. A ``DOCGEMMA_AUTH`` nobody can sign in with is a start-up
error."""

from __future__ import annotations

from pathlib import Path

import pytest

from docgemma.__main__ import main
from docgemma.config import ConfigError, Settings
from docgemma.ehr.service import Ehr
from docgemma.exposure import PUBLIC_DEMO_NOTICE, check_web_exposure

EXPOSED = ["0.0.0.0", "::", "192.168.1.20", "app.clinic.example"]


@pytest.mark.parametrize("host", EXPOSED)
def test_the_web_app_refuses_a_non_loopback_address_without_a_login(host: str) -> None:
    with pytest.raises(ConfigError, match="DOCGEMMA_AUTH"):
        check_web_exposure(host, auth=None, public_demo=False, external_record=False)
    assert check_web_exposure(host, auth="dr.ada:s3cret", public_demo=False, external_record=True) is None


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1"])
def test_loopback_needs_no_login(host: str) -> None:
    assert check_web_exposure(host, auth=None, public_demo=False, external_record=True) is None


def test_a_public_demo_is_explicit_and_never_over_another_record() -> None:
    assert check_web_exposure("0.0.0.0", auth=None, public_demo=True, external_record=False) == PUBLIC_DEMO_NOTICE
    with pytest.raises(ConfigError, match="DOCGEMMA_FHIR_BASE_URL"):
        check_web_exposure("0.0.0.0", auth=None, public_demo=True, external_record=True)


def test_the_cli_refuses_before_loading_anything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("DOCGEMMA_AUTH", "DOCGEMMA_PUBLIC_DEMO", "DOCGEMMA_FHIR_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DOCGEMMA_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("DOCGEMMA_BACKEND", "fake")
    monkeypatch.setenv("GRADIO_SERVER_NAME", "0.0.0.0")
    monkeypatch.setenv("GRADIO_SERVER_PORT", "1")
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert "refusing to serve the web app on 0.0.0.0 without a login" in err and "DOCGEMMA_AUTH" in err
    assert not list(tmp_path.iterdir())  # no record, no conversation database


@pytest.mark.parametrize("value", ["clinician", "clinician:", ":s3cret", " :s3cret"])
def test_a_login_nobody_can_use_is_a_start_up_error(value: str) -> None:
    with pytest.raises(ConfigError, match="DOCGEMMA_AUTH must be user:password") as error:
        Settings.from_env({"DOCGEMMA_AUTH": value})
    assert "s3cret" not in str(error.value)  # the message never repeats a password
    assert Settings.from_env({"DOCGEMMA_AUTH": "dr.ada:pa:ss"}).auth == "dr.ada:pa:ss"  # a colon in the password
    assert Settings.from_env({"DOCGEMMA_AUTH": ""}).auth is None


def test_the_public_demo_switch() -> None:
    assert Settings.from_env({}).public_demo is False
    assert Settings.from_env({"DOCGEMMA_PUBLIC_DEMO": "on"}).public_demo is True
    # A Space is a public demo by default (it must serve on 0.0.0.0; the synthetic-record check still applies) …
    assert Settings.from_env({"SPACE_ID": "someone/docgemma"}).public_demo is True
    # … unless its owner turns it off (then a DOCGEMMA_AUTH secret is needed).
    assert Settings.from_env({"SPACE_ID": "someone/docgemma", "DOCGEMMA_PUBLIC_DEMO": "off"}).public_demo is False
    with pytest.raises(ConfigError, match="DOCGEMMA_PUBLIC_DEMO"):
        Settings.from_env({"DOCGEMMA_PUBLIC_DEMO": "yes please"})


def test_a_public_demo_serves_only_the_synthetic_demo_record(tmp_path: Path) -> None:
    from docgemma.serve import assemble, require_synthetic

    demo = Ehr.embedded(tmp_path / "demo" / "record.sqlite")
    require_synthetic(demo)  # the shipped demo patients, each tagged synthetic-demo
    settings = Settings(data_dir=tmp_path / "demo", backend="fake", public_demo=True, server_name="0.0.0.0")
    app = assemble(settings, public_notice=PUBLIC_DEMO_NOTICE)
    try:
        status = next(fn.fn for fn in app.demo.fns.values() if getattr(fn.fn, "__name__", "") == "status")
        assert "PUBLIC DEMO: no login" in status()  # the page's status line says it, on every page load
    finally:
        app.store.close()
    real = Ehr.embedded(tmp_path / "real" / "record.sqlite", seed=None)
    real.client.create({"resourceType": "Patient", "name": [{"family": "Real", "given": ["Person"]}]})
    with pytest.raises(ConfigError, match="1 patient\\(s\\) that are not demo patients"):
        require_synthetic(real)
    demo.client.create({"resourceType": "Patient", "name": [{"family": "Added", "given": ["Later"]}]})
    with pytest.raises(ConfigError, match="DOCGEMMA_PUBLIC_DEMO"):
        require_synthetic(demo)
