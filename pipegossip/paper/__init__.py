"""The paper tables and reference reproductions."""
