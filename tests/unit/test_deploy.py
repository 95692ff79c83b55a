"""deploy/ against the app it deploys. Docker cannot run where the tests run, so the compose file is checked, not
run: against the Compose specification's schema; every DOCGEMMA_* variable it sets is one the app reads and
accepts; the services agree with one another (model name, ports, database credentials, the proxy's template
names); the health checks call endpoints the app serves. What can run here runs: ``nginx -t`` on the proxy
config (Debian's nginx), ``promtool check config`` on Prometheus's (Debian's prometheus), the replica image's
package set (requirements-server.txt). The proxy itself runs in tests/e2e/test_deploy_proxy.py."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from packaging.requirements import Requirement

from docgemma.config import Settings
from docgemma.ops.health import Readiness
from docgemma.ops.metrics import Metrics
from docgemma.ui.server import HEALTH_PATHS, build_app
from tests.nginx import check as nginx_check
from tests.nginx import missing_reason as nginx_missing
from tests.nginx import render

ROOT = Path(__file__).parents[2]
DEPLOY = ROOT / "deploy"
SAMPLE = {"VLLM_API_KEY": "k", "POSTGRES_PASSWORD": "pw", "DOCGEMMA_AUTH": "clinician:pw", "HF_TOKEN": "hf_x",
          "DOCGEMMA_REPLICAS": "2", "DOCGEMMA_HTTP_PORT": "80", "DOCGEMMA_HTTPS_PORT": "443",
          "DOCGEMMA_NETWORK": "172.28.0.0/16"}
#: What a replica behind a model server leaves out (requirements.txt minus requirements-server.txt).
MODEL_STACK = {"torch", "transformers", "accelerate", "bitsandbytes", "llguidance", "gguf"}


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
    assert set(env) - ours == {"GRADIO_SERVER_NAME", "GRADIO_SERVER_PORT"}  # Gradio's own names, read by Settings.from_env
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
    lb = compose["services"]["lb"]["environment"]
    assert lb["DOCGEMMA_REPLICA_SERVICE"] == f"app:{env['GRADIO_SERVER_PORT']}"
    assert lb["DOCGEMMA_REPLICA_PORT"] == env["GRADIO_SERVER_PORT"]
    nginx = (DEPLOY / "nginx.conf").read_text()
    assert "proxy_buffering off;" in nginx  # the answers stream as server-sent events


def test_every_secret_is_required_not_defaulted() -> None:
    text = (DEPLOY / "compose.yaml").read_text()
    for name in ("POSTGRES_PASSWORD", "VLLM_API_KEY", "HF_TOKEN", "DOCGEMMA_AUTH"):
        uses = re.findall(r"\$\{" + name + r"(:[-?])?", text)
        assert uses and all(op == ":?" for op in uses), name
    assert set(SAMPLE) == {line.split("=")[0] for line in (DEPLOY / "env.example").read_text().splitlines()
                           if line and not line.startswith("#")}


def test_compose_file_is_valid_compose(compose: dict[str, Any]) -> None:
    """The Compose specification's own schema (what ``docker compose`` checks), before and after substitution."""
    import jsonschema

    schema = json.loads((ROOT / "tests" / "fixtures" / "compose-spec" / "compose-spec.json").read_text())
    jsonschema.validate(yaml.safe_load((DEPLOY / "compose.yaml").read_text()), schema)
    jsonschema.validate(compose, schema)


def lb_values(compose: dict[str, Any]) -> dict[str, str]:
    """What the nginx image fills into the template: the lb service's DOCGEMMA_* environment."""
    return {k: str(v) for k, v in compose["services"]["lb"]["environment"].items() if k.startswith("DOCGEMMA_")}


def test_the_proxy_template_gets_every_name_from_compose(compose: dict[str, Any]) -> None:
    lb = compose["services"]["lb"]
    values = lb_values(compose)
    render(values)  # every ${DOCGEMMA_*} of nginx.conf is given, and nothing else
    env = lb["environment"]
    assert env["NGINX_ENVSUBST_OUTPUT_DIR"] == "/etc/nginx" and env["NGINX_ENVSUBST_FILTER"] == "DOCGEMMA_"
    assert "./nginx.conf:/etc/nginx/templates/nginx.conf.template:ro" in lb["volumes"]
    certs = next(v.split(":")[1] for v in lb["volumes"] if v.startswith("./certs:"))
    assert Path(values["DOCGEMMA_TLS_CERT"]).parent == Path(values["DOCGEMMA_TLS_KEY"]).parent == Path(certs)
    published = {int(p.split(":")[1]): int(p.split(":")[0]) for p in lb["ports"]}  # container port -> host port
    assert set(published) == {int(values["DOCGEMMA_LISTEN_HTTP"]), int(values["DOCGEMMA_LISTEN_HTTPS"])}
    assert str(published[int(values["DOCGEMMA_LISTEN_HTTPS"])]) == values["DOCGEMMA_PUBLIC_HTTPS_PORT"]
    subnet = compose["networks"]["default"]["ipam"]["config"][0]["subnet"]
    assert values["DOCGEMMA_REPLICA_NETWORK"] == subnet and values["DOCGEMMA_RESOLVER"] == "127.0.0.11"


def test_nginx_accepts_the_config_compose_renders(compose: dict[str, Any], tmp_path: Path) -> None:
    """``nginx -t`` with Debian's nginx on the file as compose renders it (certificate paths made local)."""
    reason = nginx_missing()
    if reason:
        pytest.skip(reason)
    if shutil.which("openssl") is None:
        pytest.skip("the certificate script needs openssl")
    certs = tmp_path / "certs"
    subprocess.run(["bash", str(DEPLOY / "make-self-signed-cert.sh"), "docgemma.example", str(certs)], check=True,
                   capture_output=True, timeout=60)
    assert (certs / "tls.key").stat().st_mode & 0o077 == 0  # the key is readable by its owner only
    values = {**lb_values(compose), "DOCGEMMA_TLS_CERT": str(certs / "tls.crt"),
              "DOCGEMMA_TLS_KEY": str(certs / "tls.key")}
    config = tmp_path / "nginx" / "nginx.conf"
    config.parent.mkdir()
    config.write_text(render(values))
    tested = nginx_check(config)
    assert tested.returncode == 0, tested.stderr


def test_the_proxy_keeps_the_port_terminates_tls_and_resolves_at_run_time() -> None:
    """Guards on the text; tests/e2e/test_deploy_proxy.py shows each of them working."""
    nginx = (DEPLOY / "nginx.conf").read_text()
    assert "proxy_set_header Host $http_host;" in nginx and "proxy_set_header X-Forwarded-Host $http_host;" in nginx
    assert "proxy_set_header X-Forwarded-Proto $scheme;" in nginx
    assert re.search(r"listen \$\{DOCGEMMA_LISTEN_HTTPS\} ssl", nginx) and "ssl_certificate ${DOCGEMMA_TLS_CERT};" in nginx
    assert "return 301 https://$host:${DOCGEMMA_PUBLIC_HTTPS_PORT}$request_uri;" in nginx
    assert re.search(r"^\s*resolver \$\{DOCGEMMA_RESOLVER\} valid=", nginx, re.M)
    # Every proxy_pass goes through a variable (resolved at run time), none to a name fixed when nginx starts.
    assert re.findall(r"proxy_pass (\S+);", nginx) == ["http://$replica", "http://$any_replica"]
    assert not re.search(r"^\s*(upstream|ip_hash)\b", nginx, re.M)


def test_prometheus_scrapes_the_replicas_and_vllm_and_keeps_its_data(compose: dict[str, Any]) -> None:
    config = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    replicas = jobs["docgemma"]["dns_sd_configs"][0]
    assert replicas["names"] == ["app"] and str(replicas["port"]) == app_env(compose)["GRADIO_SERVER_PORT"]
    assert jobs["vllm"]["static_configs"][0]["targets"] == ["vllm:8000"]
    assert app_env(compose)["DOCGEMMA_OPENAI_BASE_URL"].startswith("http://vllm:8000/")
    prometheus = compose["services"]["prometheus"]
    assert "prometheus:/prometheus" in prometheus["volumes"] and "prometheus" in compose["volumes"]
    assert "--storage.tsdb.path=/prometheus" in prometheus["command"]
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool (Debian's prometheus package) is not installed: the file was read, not validated")
    checked = subprocess.run([promtool, "check", "config", str(DEPLOY / "prometheus.yml")], capture_output=True,
                             text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_vllm_is_a_release_that_serves_medgemma_1_5(compose: dict[str, Any]) -> None:
    """v0.11.0 predated MedGemma 1.5; v0.33.0's model registry has Gemma3ForConditionalGeneration (MedGemma 1.5's
    architecture) and its server takes the json_schema response format (checked in its wheel)."""
    image = compose["services"]["vllm"]["image"]
    name, _, tag = image.partition(":")
    assert name == "vllm/vllm-openai"
    assert tuple(int(n) for n in tag.removeprefix("v").split(".")) >= (0, 33, 0), image


def requirement_lines(name: str) -> dict[str, str]:
    lines = (line.split("#", 1)[0].strip() for line in (ROOT / name).read_text().splitlines())
    return {Requirement(line).name.lower(): line for line in lines if line and not line.startswith("-")}


def test_the_replica_image_installs_no_model_stack(compose: dict[str, Any]) -> None:
    """A replica behind vLLM needs no torch: the Dockerfile installs requirements-server.txt unless told otherwise,
    and that file is requirements.txt without the local-model packages (same lines, nothing else)."""
    full, server = requirement_lines("requirements.txt"), requirement_lines("requirements-server.txt")
    assert all(full.get(name) == line for name, line in server.items()), "requirements-server.txt drifted"
    assert set(full) - set(server) == MODEL_STACK
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "ARG REQUIREMENTS=requirements-server.txt" in dockerfile
    assert 'pip install -r "$REQUIREMENTS" -c constraints.txt' in dockerfile
    build = compose["services"]["app"]["build"]
    assert "REQUIREMENTS" not in (build.get("args") or {})  # the compose replicas use vLLM: the default
    assert app_env(compose)["DOCGEMMA_BACKEND"] == "openai"


def test_the_build_context_leaves_out_what_the_image_does_not_need() -> None:
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    assert {".git", ".venv", "**/__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".docgemma",
            "deploy/.env", "deploy/certs", "**/*.sqlite", "test-artifacts", "experiments_out"} <= ignored
    copied = re.findall(r"^COPY (\S+)", (DEPLOY / "Dockerfile").read_text(), re.M)
    assert not any(path.rstrip("/") in ignored for path in copied)  # everything the image copies is sent
