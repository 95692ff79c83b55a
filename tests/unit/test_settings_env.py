"""Settings are typed and read in one place: a switch is a bool (None: the component decides), and a subprocess
(the MCP tool server) is given the settings explicitly, as the variables ``Settings.from_env`` reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from docgemma import runtime
from docgemma.config import ConfigError, Settings


def test_switches_are_typed() -> None:
    assert Settings.from_env({"DOCGEMMA_PREFIX_CACHE": "on"}).prefix_cache is True
    assert Settings.from_env({"DOCGEMMA_PREFIX_CACHE": "OFF"}).prefix_cache is False
    assert Settings.from_env({}).prefix_cache is None
    assert Settings.from_env({"DOCGEMMA_TOOL_TRANSPORT": "mcp"}).tool_transport == "mcp"


def test_the_model_cache_is_the_users_cache_folder_a_path_or_off(tmp_path: Path) -> None:
    assert Settings.from_env({"XDG_CACHE_HOME": str(tmp_path)}).model_cache_dir == tmp_path / "docgemma" / "models"
    assert Settings.from_env({"DOCGEMMA_MODEL_CACHE": str(tmp_path)}).model_cache_dir == tmp_path
    assert Settings.from_env({"DOCGEMMA_MODEL_CACHE": "off"}).model_cache_dir is None
    # "off" survives the trip to a subprocess (None is not "the default")
    assert Settings.from_env(Settings(model_cache_dir=None).to_env()).model_cache_dir is None


def test_settings_round_trip_through_the_environment(tmp_path: Path) -> None:
    settings = Settings(backend="fake", data_dir=tmp_path, max_image_pixels=1_000_000, tool_timeout_s=2.5,
                        prefix_cache=False, tool_transport="mcp", openfda_url="http://127.0.0.1:9",
                        openfda_api_key="k", fhir_base_url="http://127.0.0.1:8/fhir", log_level="INFO")
    assert Settings.from_env(settings.to_env()) == settings
    assert Settings.from_env(Settings().to_env()) == Settings()


def test_the_tool_server_subprocess_gets_the_settings_it_was_built_with(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings built in code (not from the environment) reach the MCP subprocess; a variable of ours that the
    settings leave unset is not inherited from this process's environment."""
    monkeypatch.setenv("DOCGEMMA_FHIR_BASE_URL", "http://elsewhere.invalid/fhir")
    monkeypatch.setenv("DOCGEMMA_OPENFDA_URL", "http://elsewhere.invalid")
    seen: dict[str, Any] = {}

    class Client:
        def __init__(self, env: dict[str, str]) -> None:
            seen.update(env)

        def executor(self, name: str) -> Any:
            return lambda *a, **k: None

    monkeypatch.setattr("docgemma.tools.mcp_client.McpToolClient", Client)
    settings = Settings(backend="fake", data_dir=tmp_path, tool_transport="mcp", openfda_url="http://127.0.0.1:9")
    runtime.build_registry(settings, runtime.build_ehr(settings))
    assert Settings.from_env(seen) == settings
    assert "DOCGEMMA_FHIR_BASE_URL" not in seen and "PATH" in seen


def test_the_web_address_is_read_with_the_other_settings() -> None:
    """Gradio's own variables name the address; Settings reads them like every other setting (serve.launch reads
    no environment), and a bad port is a clear error, not a traceback from the server."""
    settings = Settings.from_env({"GRADIO_SERVER_NAME": "0.0.0.0", "GRADIO_SERVER_PORT": "7871"})
    assert (settings.server_name, settings.server_port) == ("0.0.0.0", 7871)
    assert Settings.from_env({}).server_port == 7860
    assert settings.to_env()["GRADIO_SERVER_PORT"] == "7871"
    for bad in ("http", "0", "70000"):
        with pytest.raises(ConfigError, match="GRADIO_SERVER_PORT"):
            Settings.from_env({"GRADIO_SERVER_PORT": bad})
