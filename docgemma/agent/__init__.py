"""The v3 agent graph (docs/design-notes.md): seven nodes plus the error handler, wired in :mod:`.graph`."""

# The rule-based demo model is the agent's imitation: importing the agent registers it as the `fake` backend.
from docgemma.agent import demo_llm as _demo_llm  # noqa: F401
