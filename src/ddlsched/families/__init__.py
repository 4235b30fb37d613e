"""Wiring modules: one per family, registering its instance format, presets and methods.

Each module imports its family's problem, workloads, heuristics and
formulations, and registers them in :mod:`ddlsched.registry`; nothing else
in the package needs to know which families exist.

Each family module's docstring is the map of its paper's code: its section
"Modules of the family" names every module of the layers ``problems/``,
``workloads/``, ``heuristics/``, ``models/``, ``sim/`` and ``solvers/`` that
belongs to the family; the modules that serve every family are listed
here. ``tests/test_layout.py`` checks that every module of those layers is
on exactly one of these maps.

Modules of the shared core:

* solvers: :mod:`ddlsched.solvers.formulation` (the :class:`Formulation`
  interface, :func:`solve_formulation`), :mod:`ddlsched.solvers.backends`
  (HiGHS and SCIP through Pyomo, statuses, limits),
  :mod:`ddlsched.solvers.limits` (solve settings without Pyomo),
  :mod:`ddlsched.solvers.result` (statuses, claims, results),
  :mod:`ddlsched.solvers.highs_lp` (many small LPs and MILPs in highspy),
  :mod:`ddlsched.solvers.highs_rerun` (one LP re-solved in place: each run's time
  limit on HiGHS's run clock, model statuses by name; dmlrs colgen's master and
  ``ub_branch``'s node LP),
  :mod:`ddlsched.solvers.lp_dual_bound` (an LP's bound by weak duality at
  HiGHS's duals, whatever its tolerances when every column has finite bounds:
  asrpt's LP bound),
  :mod:`ddlsched.solvers.highs_worker` (a Pyomo HiGHS MILP in a process the
  deadline kills), :mod:`ddlsched.solvers.highs_server` (direct highspy MIPs
  in one long-lived process the deadline kills) and
  :mod:`ddlsched.solvers.cpsat` (CP-SAT: status mapping, limits, seed,
  workers; asrpt's ``exact`` and placement's threshold search).
"""
