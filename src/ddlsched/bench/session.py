"""Methods registered in the user's session run on the benchmark's worker processes.

A method defined in a notebook cell (or a script) and registered there
(:func:`ddlsched.api.register_method`; its origin is ``session``) is not
importable by the worker processes of ``bench run`` / :func:`run_suite`,
which are fresh interpreters. Its task therefore carries the method,
pickled by value with ``cloudpickle`` (the adapter, its parameter class and
what it reaches in its own module, ``__main__`` or a script's; ddlsched and
other installed modules are pickled by reference), and the worker registers
it before running the task. The task also carries the
method's fingerprint, computed here where the source can be read.

Methods of ddlsched and of installed plug-ins are never shipped: the worker
imports them itself.
"""

from __future__ import annotations

import hashlib
import logging
import sys
from typing import Any

__all__ = ["install_session_method", "session_payload"]

log = logging.getLogger(__name__)

#: Payload hashes already registered in this (worker) process, by (family, method).
_INSTALLED: dict[tuple[str, str], str] = {}


def _is_session(method: Any) -> bool:
    origin = getattr(method, "origin", None)
    return origin is not None and getattr(origin, "group", None) == "session"


def session_payload(family: str, name: str) -> bytes | None:
    """The pickled method ``family.name`` if it was registered in this session, else ``None``."""
    from ddlsched.registry import get_method

    method = get_method(family, name)
    if not _is_session(method):
        return None
    import cloudpickle

    module = sys.modules.get(getattr(method.run, "__module__", "") or "")
    by_value = module is not None and module.__name__ != "__main__"
    if by_value:  # a script or test module the workers may not import: ship its code too
        cloudpickle.register_pickle_by_value(module)
    try:
        return cloudpickle.dumps(method)
    finally:
        if by_value:
            cloudpickle.unregister_pickle_by_value(module)


def install_session_method(task: Any) -> None:
    """Register the session method ``task`` carries (once per payload) in this process."""
    payload = task.session_method
    if payload is None:
        return
    key = (task.instance.family, task.method)
    digest = hashlib.sha256(payload).hexdigest()
    if _INSTALLED.get(key) == digest:
        return
    import pickle

    from ddlsched.registry import register_method

    method = pickle.loads(payload)
    # The session's rules apply here too: it may replace a session method of its name,
    # never a method of ddlsched or of an installed plug-in.
    register_method(
        method.family,
        method.name,
        method.kind,
        method.summary,
        method.params_type,
        hazardous=method.hazardous,
        interruptible=method.interruptible,
    )(method.run)
    _INSTALLED[key] = digest
    log.debug("session method %s.%s installed", *key)
