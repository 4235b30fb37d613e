"""ddlsched: scheduling distributed deep-learning training jobs on GPU clusters.

Published heuristics (SJF-BCO, Heavy-Edge, A-SRPT, PD-ORS, Muri and their
baselines) next to exact formulations of the same problems (Pyomo models
solved with HiGHS, cross-checked with OR-Tools), with the family evaluators
as the one place that computes objectives.
"""

__version__ = "0.3.0"

__all__ = ["__version__"]
