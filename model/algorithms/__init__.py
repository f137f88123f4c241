"""Schedule generators, one module per source."""
