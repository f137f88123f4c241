"""The sweep runner, its result store and the sweep jobs."""
