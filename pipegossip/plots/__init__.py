"""The pictures (matplotlib, no display needed)."""
