"""Failure simulation: what takes over, how long it takes, who is hurt meanwhile."""
