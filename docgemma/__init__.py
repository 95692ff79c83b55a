"""DocGemma Connect: an agentic clinical decision-support assistant on MedGemma."""

__version__ = "0.1.0"
