"""heuristics package."""
