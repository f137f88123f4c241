"""Benchmarks of the golden model."""
