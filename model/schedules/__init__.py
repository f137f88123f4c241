"""Communication schedules: one representation, one validator, bounds."""
