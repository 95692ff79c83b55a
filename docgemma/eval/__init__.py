"""The measurement wing: the golden runner and its oracle, token metering, the per-turn budgets, the bench and
the node-level experiments. It may import the product; the product never imports it."""
