"""The validated model's graph view (no I/O, no YAML, no templates)."""
