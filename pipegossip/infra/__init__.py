"""The floor under every package: outputs, size budgets, bounded work."""
