"""One module per tool: its arguments model, description, clinical label, example, task keywords and roles,
argument extractor, follow-up, write check, and its executor (or, when the executor needs a client built at
start-up, the function that builds it from that client). ``tools/registry.py`` lists the modules in order."""
