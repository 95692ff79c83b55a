"""Node-level experiments (issue 11): each suite runs one LLM node in isolation, with the project's real
prompts, schemas and generation settings, over a labelled dataset in ``data/``, and varies what seed 002
varied. ``python -m docgemma experiment SUITE --backend B [--limit N] [--out DIR]``.

The variants that seed 002 rejected (boolean probing, reasoning-then-select, joint selection, thinking
prefixes, model-decided sufficiency / ask_user / skip / plans) live only here, never in the agent.
"""
