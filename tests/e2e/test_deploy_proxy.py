"""The hospital deployment's proxy, run for real: Debian's nginx with the shipped ``deploy/nginx.conf`` (its
``${DOCGEMMA_*}`` names filled in for this machine: ports, certificate, DNS server) in front of two app replicas
(``python app.py``, demo model, one data directory between them as the compose file's shared volume), driven in
Chromium over HTTPS.

* HTTP redirects to HTTPS on the public port; the self-signed certificate comes from deploy/make-self-signed-cert.sh.
* An image uploaded in the chat renders: Gradio builds its URL from the Host header, which must keep the port.
* A browser stays on one replica (a cookie names it); fresh browsers are spread over both.
* The replicas' name is resolved again while nginx runs: a replica restarted at a new address is reached without
  restarting nginx, and a browser pinned to the gone one is moved to a live one.
* A replica stopped with SIGTERM while a browser is connected exits within 5 s, exit status 0.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.app_process import App, app_env
from tests.conftest import free_port
from tests.dns_stub import DnsStub, dns_stub
from tests.e2e.test_browser import CHROMIUM, TIMEOUT_MS, ask
from tests.fixture_images import noise_png
from tests.nginx import DEPLOY, Nginx, check, missing_reason, render

pytestmark = pytest.mark.slow
NAME = "replicas.docgemma.test"  # the compose service name's stand-in, resolved by the test's DNS server
VALID_S = 10  # deploy/nginx.conf: resolver … valid=10s


@dataclass
class Proxy:
    https: str
    http_port: int
    https_port: int
    replica_port: int
    dns: DnsStub
    replicas: dict[str, App]
    tmp: Path

    def start_replica(self, ip: str) -> App:
        app = App(app_env(self.tmp, self.replica_port, GRADIO_SERVER_NAME=ip))
        app.ready_url()
        self.replicas[ip] = app
        return app


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[Proxy]:
    reason = missing_reason()
    if reason:
        pytest.skip(reason)
    certs = tmp_path / "certs"
    subprocess.run(["bash", str(DEPLOY / "make-self-signed-cert.sh"), "localhost", str(certs)], check=True,
                   capture_output=True, timeout=60)
    replica_port, http_port, https_port = free_port(), free_port(), free_port()
    with dns_stub({NAME: ["127.0.0.2", "127.0.0.3"]}) as dns:
        setup = Proxy(f"https://127.0.0.1:{https_port}", http_port, https_port, replica_port, dns, {}, tmp_path)
        nginx = None
        try:
            for ip in ("127.0.0.2", "127.0.0.3"):  # one after the other: the first creates the demo record
                setup.start_replica(ip)
            config = tmp_path / "nginx" / "nginx.conf"
            config.parent.mkdir()
            config.write_text(render({
                "DOCGEMMA_LISTEN_HTTP": str(http_port), "DOCGEMMA_LISTEN_HTTPS": str(https_port),
                "DOCGEMMA_PUBLIC_HTTPS_PORT": str(https_port),
                "DOCGEMMA_TLS_CERT": str(certs / "tls.crt"), "DOCGEMMA_TLS_KEY": str(certs / "tls.key"),
                "DOCGEMMA_RESOLVER": f"127.0.0.1:{dns.port}", "DOCGEMMA_REPLICA_SERVICE": f"{NAME}:{replica_port}",
                "DOCGEMMA_REPLICA_PORT": str(replica_port), "DOCGEMMA_REPLICA_NETWORK": "127.0.0.0/8"}))
            tested = check(config)
            assert tested.returncode == 0, tested.stderr
            nginx = Nginx(config)
            nginx.wait_listening(https_port)
            yield setup
        finally:
            if nginx is not None:
                nginx.stop()
            for app in setup.replicas.values():
                if app.process.poll() is None:
                    app.process.kill()
                    app.process.wait(30)


@pytest.fixture
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="the browser test needs: pip install playwright")
    if not Path(CHROMIUM).exists():
        pytest.skip("the browser test needs Chromium: apt-get install chromium (scripts/dev.sh test installs it)")
    with sync_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--no-first-run"])
        yield launched
        launched.close()


def open_page(browser: Any, url: str) -> tuple[Any, Any]:
    context = browser.new_context(ignore_https_errors=True, viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("#input textarea", timeout=TIMEOUT_MS)
    return context, page


def pinned(context: Any) -> str:
    values = [c["value"] for c in context.cookies() if c["name"] == "docgemma_replica"]
    assert len(values) == 1, context.cookies()
    return str(values[0])


def new_visitor(proxy: Proxy) -> str:
    """The replica a first request (no cookie yet) is pinned to."""
    response = httpx.get(proxy.https + "/", verify=False, timeout=30)
    assert response.status_code == 200
    return str(response.cookies["docgemma_replica"])


def upload_and_see_the_image(page: Any, image: Path, https: str) -> None:
    before = page.locator("#chat img").count()
    page.locator("#input input[type=file]").set_input_files(str(image))
    ask(page, "What does this image show?")
    # The steps are the timeline's (issue 46): the image in the chat is the signal.
    page.wait_for_function(f"document.querySelectorAll('#chat img').length > {before}", timeout=TIMEOUT_MS)
    shown = page.locator("#chat img").last
    src = shown.get_attribute("src")
    # The image's URL is the proxy's, port included; and it loads through the proxy.
    assert src and src.startswith(f"{https}/gradio_api/file="), src
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=shown.element_handle(),
                           timeout=TIMEOUT_MS)


def test_nginx_with_tls_sticky_replicas_and_an_image_rendered_in_chromium(proxy: Proxy, browser: Any,
                                                                            tmp_path: Path) -> None:
    redirect = httpx.get(f"http://127.0.0.1:{proxy.http_port}/?q=1", follow_redirects=False, timeout=10)
    assert redirect.status_code == 301 and redirect.headers["location"] == f"{proxy.https}/?q=1"
    assert httpx.get(f"{proxy.https}/metrics", verify=False, timeout=10).status_code == 404

    image = tmp_path / "wound.png"
    image.write_bytes(noise_png(64, 48))
    context, page = open_page(browser, proxy.https + "/")
    first = pinned(context)
    upload_and_see_the_image(page, image, proxy.https)
    assert pinned(context) == first  # every request of this browser went to one replica
    # New visitors are spread over both replicas (nginx starts at a random one of the name's addresses): 20
    # first requests all on one replica would happen once in half a million runs.
    seen = {new_visitor(proxy) for _ in range(20)}
    assert seen == {f"127.0.0.2:{proxy.replica_port}", f"127.0.0.3:{proxy.replica_port}"}

    # The replica this browser is on stops (SIGTERM, browser connected): quickly and cleanly.
    gone_ip = first.split(":")[0]
    code, seconds = proxy.replicas[gone_ip].stop(timeout_s=10)
    assert code == 0 and seconds < 5, (code, seconds, "\n".join(proxy.replicas[gone_ip].err[-30:]))
    assert "Traceback" not in "\n".join(proxy.replicas[gone_ip].err)
    # It comes back at a new address; the DNS name now lists only that one. nginx finds it without a restart.
    proxy.start_replica("127.0.0.4")
    proxy.dns.answer(NAME, ["127.0.0.4"])
    time.sleep(VALID_S + 1)
    assert {new_visitor(proxy) for _ in range(5)} == {f"127.0.0.4:{proxy.replica_port}"}
    # The first browser, pinned to the address that is gone, reloads: it lands on a live replica and works.
    page.goto(proxy.https + "/", wait_until="domcontentloaded")
    page.wait_for_selector("#input textarea", timeout=TIMEOUT_MS)
    assert pinned(context) in {f"127.0.0.{n}:{proxy.replica_port}" for n in (3, 4)}
    upload_and_see_the_image(page, image, proxy.https)
    context.close()
    assert os.path.getsize(proxy.tmp / "data" / "conversations.sqlite") > 0  # the replicas' shared store
