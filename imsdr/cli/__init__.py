"""The typer command-line layer: the only place that prints or exits."""
