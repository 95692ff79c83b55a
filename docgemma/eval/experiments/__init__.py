"""Node-level experiments: each suite runs one LLM node in isolation, with the project's real
prompts, schemas and generation settings, over a labelled dataset in ``data/``, and varies what the design
study varied (docs/design-notes.md). ``python -m docgemma experiment SUITE --backend B [--limit N] [--out DIR]``.

The variants that the study rejected (boolean probing, reasoning-then-select, joint selection, thinking
prefixes, model-decided sufficiency / ask_user / skip / plans) live only here, never in the agent.
"""
