"""Running the app beyond one process: the shared conversation store, health and readiness, metrics."""
