"""One node per module; each is a function of the state (plus injected dependencies) returning only
the fields it changes."""
