"""Registry adapters for the ``rar`` formulations (filled in with the models)."""
