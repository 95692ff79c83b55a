"""DocGemma Connect web app (Hugging Face Spaces entry point): ``python app.py``."""

from __future__ import annotations

import logging

from docgemma.config import Settings
from docgemma.ui.app import launch

if __name__ == "__main__":
    settings = Settings.from_env()
    logging.basicConfig(level=settings.log_level, format="%(levelname)s %(name)s: %(message)s")
    launch(settings)
