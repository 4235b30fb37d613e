"""Registry adapters for the ``rar`` heuristics (filled in with the heuristics)."""
