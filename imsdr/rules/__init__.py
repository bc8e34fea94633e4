"""DR design rules: self-describing units in an explicit registry."""
