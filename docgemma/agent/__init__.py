"""The v3 agent graph (seed 002): seven nodes plus the error handler, wired in :mod:`.graph`."""
