"""Wiring modules: one per family, registering its instance format, presets and methods.

Each module imports its family's problem, workloads, heuristics and
formulations, and registers them in :mod:`ddlsched.registry`; nothing else
in the package needs to know which families exist.
"""
