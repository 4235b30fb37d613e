"""The benchmark platform: suites, executors, the result store, tables and plots.

Modules, in the order data flows through them:

* :mod:`~ddlsched.bench.suite`: suite files (TOML) read and checked, into the
  validated dataclasses of :mod:`~ddlsched.bench.suite_spec` (field checks and
  the one-line :class:`~ddlsched.bench.suite_values.SuiteError` in
  :mod:`~ddlsched.bench.suite_values`); :mod:`~ddlsched.bench.check`: every
  check a run would make task by task, before it runs;
* :mod:`~ddlsched.bench.tasks`: a suite expanded into tasks, their content
  keys, and :func:`~ddlsched.bench.tasks.execute`, which turns a task into a
  result row; :mod:`~ddlsched.bench.instance_cache`: each generated instance
  built once per results directory (``RESULTS/instances/``), read back by the
  check and the workers;
* :mod:`~ddlsched.bench.executors` (and :mod:`~ddlsched.bench.worker`, the
  sandbox process): the local process pool and Dask, with per-task kill
  deadlines and crash isolation;
* :mod:`~ddlsched.bench.store`: append-only Parquet parts and a manifest,
  written through :mod:`~ddlsched.bench.files` (atomic writes, one-line
  faults, stale temporary files) and read through :mod:`~ddlsched.bench.gate`
  (a corrupt file is one line naming it);
* :mod:`~ddlsched.bench.runner`: :func:`~ddlsched.bench.runner.run_suite`,
  resumable; :mod:`~ddlsched.bench.retry`: which failed rows ``--retry``
  runs again;
* :mod:`~ddlsched.bench.status` and :mod:`~ddlsched.bench.runstate`:
  ``bench status``, telling a killed run from a running one;
* :mod:`~ddlsched.bench.ratios` (ratio rules), :mod:`~ddlsched.bench.aggregate`
  (interval statistics), :mod:`~ddlsched.bench.tables` (Markdown, LaTeX,
  CSV), :mod:`~ddlsched.bench.plots` (matplotlib);
* :mod:`~ddlsched.bench.compare`: the one-off ``ddlsched compare`` shortcut;
* :mod:`~ddlsched.bench.cli`: ``ddlsched bench run|table|plot|status|validate``.

See ``benchmarks/PROTOCOL.md`` for the protocol and every column's meaning.
"""

__all__: list[str] = []
