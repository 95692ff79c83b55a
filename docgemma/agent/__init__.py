"""The v3 agent graph (docs/design-notes.md): seven nodes plus the error handler, wired in :mod:`.graph`."""
