"""Where a method comes from, and how plug-ins load: all or nothing, never shadowing.

Three kinds of origin (:class:`PluginOrigin`, ``None`` for the first):

* **built in**: registered by a module of the package ``ddlsched`` (the
  wiring modules ``ddlsched.families.*``); ``Method.origin`` is ``None``;
* **entry point**: registered while an installed package's entry point of
  the group ``ddlsched.methods`` (methods for existing families) or
  ``ddlsched.families`` (whole families) is imported; the origin names the
  group, the entry point, its module and the distribution's name and version;
* **session**: registered from anywhere else (a notebook cell, a script, a
  test); group ``"session"``, name = the method's name, module = the
  adapter's ``__module__``.

Loading rules (applied by :mod:`ddlsched.registry`):

* an entry point is imported inside a :class:`Staging`: what it registers is
  held back, and committed only if the import raised nothing and no
  registration clashed (an existing method of the same family and name, an
  unknown family, an existing family name); otherwise nothing of it is
  registered and it is recorded as a :class:`BrokenPlugin` with the reason
  (one line), logged as a warning. A command that names one of its methods
  gets :class:`~ddlsched.errors.UnknownMethodError` saying why the method is
  missing; every other command works as before;
* a session registration may replace a session method of the same name
  (re-running an edited notebook cell) but not a built-in or entry-point one.

A module that a plug-in's entry point names but that was imported before
the registry loaded (``import my_plugin`` in a notebook first) registers its
methods as session methods: the import that counts is the first one.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

__all__ = [
    "FAMILIES_GROUP",
    "METHODS_GROUP",
    "SESSION_GROUP",
    "BrokenPlugin",
    "PluginOrigin",
    "Staging",
    "active_staging",
    "entry_points",
    "load_group",
    "origin_of_entry_point",
    "staging",
    "why_missing",
]

log = logging.getLogger(__name__)

#: Entry-point group of packages that add whole families.
FAMILIES_GROUP = "ddlsched.families"
#: Entry-point group of packages that add methods to existing families.
METHODS_GROUP = "ddlsched.methods"
#: The group of a method registered outside any entry point (notebook, script, test).
SESSION_GROUP = "session"


@dataclass(frozen=True)
class PluginOrigin:
    """Where a method that is not built in comes from.

    ``group`` is the entry-point group (:data:`METHODS_GROUP`,
    :data:`FAMILIES_GROUP`) or :data:`SESSION_GROUP`; ``name`` the entry
    point's name (a session method's own name); ``module`` the module that
    registered it; ``distribution`` and ``version`` the installed
    distribution that declares the entry point (``None`` for a session).
    """

    group: str
    name: str
    module: str
    distribution: str | None
    version: str | None

    def describe(self) -> str:
        """``plug-in my_lpt (ddlsched-my-lpt 0.1)``, or ``session method (module __main__)``."""
        if self.group == SESSION_GROUP:
            return f"session method (module {self.module})"
        if self.distribution is None:
            return f"plug-in {self.name} (module {self.module})"
        return f"plug-in {self.name} ({self.distribution} {self.version or '?'})"


@dataclass(frozen=True)
class BrokenPlugin:
    """An entry point that was not loaded: why (one line), and what it tried to register.

    ``methods`` and ``families`` are the ``(family, method)`` pairs and family
    names it registered before it failed (all of them when a clash rejected
    it): a command naming one of them is told why it is missing.
    """

    origin: PluginOrigin
    reason: str
    methods: tuple[tuple[str, str], ...] = ()
    families: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line: ``plug-in my_lpt (ddlsched-my-lpt 0.1) failed to load: ImportError: ...``."""
        return f"{self.origin.describe()} {self.reason}"


@dataclass
class Staging:
    """What one entry point registered while it was imported, held back until it succeeds."""

    origin: PluginOrigin
    families: dict[str, Any] = field(default_factory=dict)
    methods: dict[tuple[str, str], Any] = field(default_factory=dict)
    clashes: list[str] = field(default_factory=list)


_ACTIVE: list[Staging] = []


def active_staging() -> Staging | None:
    """The staging area of the entry point being imported (``None``: none is)."""
    return _ACTIVE[-1] if _ACTIVE else None


@contextlib.contextmanager
def staging(origin: PluginOrigin) -> Iterator[Staging]:
    """Hold back every registration made inside the ``with`` block for ``origin``."""
    stage = Staging(origin)
    _ACTIVE.append(stage)
    try:
        yield stage
    finally:
        _ACTIVE.remove(stage)


def entry_points(group: str) -> list[Any]:
    """The installed entry points of ``group`` (a failure to read them is logged, not raised)."""
    try:
        return list(metadata.entry_points(group=group))
    except Exception as exc:  # a broken installation's metadata must not break the CLI
        log.warning("could not read the entry points of %s: %s", group, exc)
        return []


def origin_of_entry_point(group: str, entry: Any) -> PluginOrigin:
    """The :class:`PluginOrigin` of ``entry`` (its distribution when the metadata names one)."""
    dist = getattr(entry, "dist", None)
    return PluginOrigin(
        group=group,
        name=str(entry.name),
        module=str(entry.value).split(":", 1)[0],
        distribution=getattr(dist, "name", None) if dist is not None else None,
        version=getattr(dist, "version", None) if dist is not None else None,
    )


def load_group(
    group: str, import_module: Callable[[str], Any], commit: Callable[[Staging], None]
) -> list[BrokenPlugin]:
    """Import every entry point of ``group``, each all or nothing; the broken ones.

    Each import runs inside a :class:`Staging`; ``commit(stage)`` registers
    what a plug-in staged, and is called only when its import raised nothing
    and no registration clashed. A broken plug-in is logged as a warning.
    """
    broken = []
    for entry in entry_points(group):
        origin = origin_of_entry_point(group, entry)
        reason = None
        with staging(origin) as stage:
            try:
                import_module(origin.module)
            except (Exception, SystemExit) as exc:  # a broken plug-in breaks nothing else
                text = " ".join(str(exc).split()) or "(no message)"
                reason = f"failed to load: {type(exc).__name__}: {text}"
        if reason is None and stage.clashes:
            reason = "was not loaded: " + "; ".join(stage.clashes)
        if reason is None:
            commit(stage)
            continue
        plugin = BrokenPlugin(origin, reason, tuple(stage.methods), tuple(stage.families))
        log.warning("%s", plugin.describe())
        broken.append(plugin)
    return broken


def why_missing(broken: Iterable[BrokenPlugin], family: str, name: str | None) -> str | None:
    """Why method ``family.name`` (the family itself when ``name`` is None) is missing.

    One line naming the broken plug-in that registered it, or ``None`` when
    no broken plug-in did.
    """
    for plugin in broken:
        if (name is None and family in plugin.families) or (family, name) in plugin.methods:
            what = f"family {family!r}" if name is None else f"method {family}.{name}"
            return f"{what} is not available: {plugin.describe()}"
    return None
