"""deploy/ against the app it deploys (no images can be pulled here, so the compose file is checked, not run):
every DOCGEMMA_* variable it sets is one the app reads and accepts, the services are there and agree with one
another (model name, ports, database credentials), and the health checks call endpoints the app serves."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from docgemma.config import Settings
from docgemma.ops.health import Readiness
from docgemma.ops.metrics import Metrics
from docgemma.ui.server import HEALTH_PATHS, build_app

DEPLOY = Path(__file__).parents[2] / "deploy"
SAMPLE = {"VLLM_API_KEY": "k", "POSTGRES_PASSWORD": "pw", "DOCGEMMA_AUTH": "clinician:pw", "HF_TOKEN": "hf_x",
          "DOCGEMMA_REPLICAS": "2", "DOCGEMMA_PUBLIC_PORT": "8080"}


def interpolate(value: Any, env: Mapping[str, str]) -> Any:
    """Compose's ${VAR}, ${VAR:-default} and ${VAR:?error}, as ``docker compose`` substitutes them."""
    if isinstance(value, str):
        def one(match: re.Match[str]) -> str:
            name, op, arg = match.group(1), match.group(2), match.group(3)
            if name in env:
                return env[name]
            if op == ":?":
                raise KeyError(f"{name}: {arg}")
            return arg or ""
        return re.sub(r"\$\{(\w+)(?:(:-|:\?)([^}]*))?\}", one, value)
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    return value


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return dict(interpolate(yaml.safe_load((DEPLOY / "compose.yaml").read_text()), SAMPLE))


class Recording(dict[str, str]):
    """An environment that remembers which names were looked up."""

    def __init__(self, values: Mapping[str, str]) -> None:
        super().__init__(values)
        self.read: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> str:
        self.read.add(key)
        return super().__getitem__(key)

    def __iter__(self) -> Iterator[str]:
        raise AssertionError("Settings.from_env must look names up, not list them")


def app_env(compose: dict[str, Any]) -> dict[str, str]:
    return {k: str(v) for k, v in compose["services"]["app"]["environment"].items()}


def test_the_services_of_a_hospital_deployment_are_there(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert {"lb", "app", "postgres", "vllm", "fhir"} <= set(services)
    assert services["app"]["deploy"]["replicas"] == "2"  # N replicas, from DOCGEMMA_REPLICAS
    needs = services["app"]["depends_on"]
    assert needs["postgres"]["condition"] == needs["vllm"]["condition"] == "service_healthy"


def test_every_docgemma_variable_is_one_the_app_reads_and_accepts(compose: dict[str, Any]) -> None:
    env = app_env(compose)
    recording = Recording(env)
    settings = Settings.from_env(recording)  # raises ConfigError on any value the app cannot use
    ours = {name for name in env if name.startswith("DOCGEMMA_")}
    assert ours and ours <= recording.read, f"set but never read: {ours - recording.read}"
    assert set(env) - ours == {"GRADIO_SERVER_NAME", "GRADIO_SERVER_PORT"}  # read by ui/app.py launch()
    assert settings.backend == "openai" and settings.checkpoint_url and settings.fhir_base_url and settings.auth


def test_the_app_settings_agree_with_the_services_they_name(compose: dict[str, Any]) -> None:
    services = compose["services"]
    settings = Settings.from_env(app_env(compose))
    vllm = dict(arg.removeprefix("--").split("=", 1) for arg in services["vllm"]["command"])
    assert settings.model == vllm["served-model-name"]  # the readiness check asks vLLM for exactly this name
    assert settings.openai_api_key == services["vllm"]["environment"]["VLLM_API_KEY"]
    model_url = urlsplit(settings.openai_base_url)
    assert (model_url.hostname, model_url.port) == ("vllm", 8000)
    db = urlsplit(str(settings.checkpoint_url))
    pg = services["postgres"]["environment"]
    assert (db.hostname, db.username, db.password, db.path) == (
        "postgres", pg["POSTGRES_USER"], pg["POSTGRES_PASSWORD"], "/" + pg["POSTGRES_DB"])
    assert urlsplit(str(settings.fhir_base_url)).hostname == "fhir"
    assert services["fhir"]["environment"]["hapi.fhir.fhir_version"] == "R4"


def test_health_checks_and_the_load_balancer_use_what_the_app_serves(compose: dict[str, Any]) -> None:
    import gradio as gr

    with gr.Blocks() as demo:
        gr.Markdown("probe")
    routes = {getattr(r, "path", None) for r in build_app(demo, Readiness({}), Metrics()).routes}
    assert set(HEALTH_PATHS) <= routes
    env = app_env(compose)
    check = " ".join(compose["services"]["app"]["healthcheck"]["test"])
    path = re.search(r"http://127\.0\.0\.1:(\d+)(/\w+)", check)
    assert path and path.group(2) == "/readyz" and path.group(1) == env["GRADIO_SERVER_PORT"]
    nginx = (DEPLOY / "nginx.conf").read_text()
    assert "ip_hash;" in nginx and f"server app:{env['GRADIO_SERVER_PORT']}" in nginx  # sticky sessions
    assert "proxy_buffering off;" in nginx  # the answers stream as server-sent events


def test_every_secret_is_required_not_defaulted() -> None:
    text = (DEPLOY / "compose.yaml").read_text()
    for name in ("POSTGRES_PASSWORD", "VLLM_API_KEY", "HF_TOKEN", "DOCGEMMA_AUTH"):
        uses = re.findall(r"\$\{" + name + r"(:[-?])?", text)
        assert uses and all(op == ":?" for op in uses), name
    assert set(SAMPLE) == {line.split("=")[0] for line in (DEPLOY / "env.example").read_text().splitlines()
                           if line and not line.startswith("#")}
