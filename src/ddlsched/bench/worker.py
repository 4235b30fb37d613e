"""The sandbox process: runs tasks sent over a pipe, one at a time.

Started by :class:`ddlsched.bench.executors.Sandbox` as
``python -m ddlsched.bench.worker READ_FD WRITE_FD [MEMORY_MB]``. It ignores
SIGINT (its parent decides when to stop it), dies with its parent (Linux
``PR_SET_PDEATHSIG``), caps its address space when asked, imports every
family and what a task's row needs (:func:`~ddlsched.bench.provenance.prepare_code_row`),
says ``("ready", pid)`` and then answers each task with
``("started", instance_size)`` and ``("done", row)``. It exits when its
parent closes the pipe.
"""

from __future__ import annotations

import os
import signal
import sys
from multiprocessing.connection import Connection

__all__ = ["main"]


def _die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
    except OSError:  # pragma: no cover - not glibc
        pass


def _limit_memory(megabytes: int) -> None:
    try:
        import resource

        limit = megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):  # pragma: no cover - not POSIX
        pass


def main(argv: list[str] | None = None) -> int:
    """The worker (module docstring); ``argv``: ``READ_FD WRITE_FD [MEMORY_MB]`` (``-``: no
    memory cap). Returns 0 when the parent is gone or has closed the pipe."""
    argv = sys.argv[1:] if argv is None else argv
    read_fd, write_fd = int(argv[0]), int(argv[1])
    memory_mb = int(argv[2]) if len(argv) > 2 and argv[2] != "-" else None
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    if os.getppid() == 1:  # parent already gone
        return 0
    inbox = Connection(read_fd, writable=False)
    outbox = Connection(write_fd, readable=False)
    # Import every family, and do what the first task's row would do for every task
    # (the store's imports, the git state of the tree), before saying ready: the
    # parent's kill clock starts at "ready", so a start-up never counts against a task.
    from ddlsched.bench.provenance import prepare_code_row
    from ddlsched.bench.tasks import execute
    from ddlsched.registry import families

    families()
    prepare_code_row()
    if memory_mb is not None:
        _limit_memory(memory_mb)
    outbox.send(("ready", os.getpid()))
    while True:
        try:
            task = inbox.recv()
        except (EOFError, OSError):
            return 0
        row = execute(task, on_started=lambda size: outbox.send(("started", size)))
        outbox.send(("done", row))


if __name__ == "__main__":
    sys.exit(main())
