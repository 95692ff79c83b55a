"""The real ``spaces`` package (0.51.3, ``requirements-dev.txt``) in its ZeroGPU mode, on a CPU-only torch.

How ``spaces`` decides it is on ZeroGPU and what it does there (read from its source, ``spaces/config.py``,
``spaces/zero/__init__.py``, ``spaces/zero/wrappers.py``, ``spaces/zero/torch/patching.py``):

* ``SPACES_ZERO_GPU`` true (``1``/``t``/``true``) and ``SPACES_ZERO_DEVICE_API_URL`` set: at import it patches
  torch (``torch.cuda.is_available`` says True, CUDA tensors are emulated on the CPU) and ``gradio.Blocks.launch``
  (the start-up report), after checking in a forked process that CUDA was not initialised before it.
* Each ``@spaces.GPU`` call asks the device API for a GPU (``POST /schedule``), forks a worker (or reuses an idle
  one), **pickles the call's arguments into it** through a multiprocessing queue, and the worker allows itself
  (``POST /allow``), undoes the torch patches, initialises CUDA (``torch.Tensor([0]).cuda()``), moves the emulated
  tensors and runs the function; results come back by pickle; ``POST /release`` ends the call. A failure comes
  back as ``gradio.Error("ZeroGPU worker error", <exception class name>)``; a quota as
  ``gradio.Error("ZeroGPU quota exceeded", …)``.

On a CPU build of torch only what it probes is missing; :func:`cpu_torch_for_spaces` supplies exactly that, so
its own pickling, forking and worker code runs unchanged:

* ``torch.version.cuda`` (its static device table reads the CUDA version) and ``torch._C._cuda_init`` (saved at
  import to be restored in the worker);
* ``torch.cuda._is_in_bad_fork``: a lambda on a CPU build, which its bad-fork check cannot pickle into its
  ``ProcessPoolExecutor``;
* ``torch.Tensor.cuda`` and ``torch.cuda.synchronize``: the worker's CUDA initialisation and tensor move; here
  a tensor stays on the CPU.

:class:`DeviceApi` is ZeroGPU's device API on 127.0.0.1, as ``spaces/zero/api.py`` calls it.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

#: The ``spaces`` version these notes were read from (requirements-dev.txt pins it).
SPACES_VERSION = "0.51.3"


def _not_in_bad_fork() -> bool:
    return False


def _no_cuda_init() -> None:
    return None


def _stays_on_cpu(self: Any, *args: Any, **kwargs: Any) -> Any:
    return self


def _no_sync(*args: Any) -> None:
    return None


def cpu_torch_for_spaces() -> None:
    """Give a CPU-only torch the few CUDA attributes ``spaces`` probes (see the module's notes). Call before
    ``import spaces``, in a process of its own: the patches are global."""
    import torch

    torch.version.cuda = torch.version.cuda or "12.8"  # type: ignore[misc]
    torch._C._cuda_init = _no_cuda_init  # type: ignore[attr-defined]
    torch.cuda._is_in_bad_fork = _not_in_bad_fork  # type: ignore[attr-defined]
    torch.Tensor.cuda = _stays_on_cpu  # type: ignore[method-assign]
    torch.cuda.synchronize = _no_sync  # type: ignore[assignment]


@dataclass
class DeviceApi:
    """ZeroGPU's device API: every request recorded; ``quota_left`` 0 answers ``/schedule`` as ZeroGPU does when
    the visitor's quota is spent (429 with the seconds left and the wait)."""

    url: str = ""
    requests: list[tuple[str, dict[str, list[str]]]] = field(default_factory=list)
    quota_left: int | None = None
    _server: ThreadingHTTPServer | None = None

    def start(self) -> DeviceApi:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                parts = urlsplit(self.path)
                api.requests.append((parts.path, parse_qs(parts.query)))
                status, body = api.answer(parts.path)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def answer(self, path: str) -> tuple[int, dict[str, Any]]:
        if path != "/schedule":
            return 200, {}
        if self.quota_left is not None:
            return 429, {"left": self.quota_left, "wait": "PT10M"}
        # idle: the worker of the previous call is reused, as on ZeroGPU between calls of one visitor.
        scheduled = sum(1 for p, _ in self.requests if p == "/schedule")
        return 200, {"idle": scheduled > 1, "nvidiaIndex": 0, "nvidiaUUID": "GPU-cpu-test", "allowToken": "token"}

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]
