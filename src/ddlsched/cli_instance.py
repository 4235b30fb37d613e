"""``ddlsched instance check`` and ``ddlsched instance schema``.

``instance check FILE [--family F]`` reports every violation of an instance
file, one line each on stdout (``$.jobs[3].gpus: must be a positive
integer, got -2``; :mod:`ddlsched.instance_check`) and a count, then the
one line ``ddlsched solve`` would print on stderr (``ddlsched: error: FILE:
<the loader's message>``), exit status 2; a valid file prints ``FILE: valid
FAMILY instance``. The family is the file's own ``family`` field unless
``--family`` names one. The older form ``instance check FAMILY FILE`` still
works.

``instance schema FAMILY`` prints the JSON Schema (draft 2020-12) of the
family's instance file, generated from the field spec its loader reads.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ddlsched.errors import DdlschedError

__all__ = ["add_instance_check_commands", "cmd_check", "cmd_schema"]


def add_instance_check_commands(inst_sub: Any) -> None:
    """Add ``check`` and ``schema`` to the ``instance`` subparsers."""
    p = inst_sub.add_parser(
        "check",
        help="validate an instance file, reporting every violation with its JSON path",
        description="Every violation of an instance file, one per line on stdout with its "
        "JSON path; exit 2 when there is any. The family is the file's 'family' field "
        "unless --family names one ('instance check FAMILY FILE' also works).",
    )
    p.add_argument("target", metavar="FILE", help="instance file (JSON)")
    p.add_argument("legacy_file", nargs="?", help=argparse.SUPPRESS)
    p.add_argument("--family", help="the family to check against (default: the file's own)")
    p.set_defaults(func=cmd_check)
    p = inst_sub.add_parser(
        "schema",
        help="print the JSON Schema of a family's instance file",
        description="The JSON Schema (draft 2020-12) of FAMILY's instance file, generated "
        "from the field spec its loader reads (docs/instances.md).",
    )
    p.add_argument("family", metavar="FAMILY", help="a family (ddlsched methods lists them)")
    p.set_defaults(func=cmd_schema)


def cmd_check(args: argparse.Namespace) -> int:
    """Check one instance file: every violation on stdout, one error line on stderr."""
    from ddlsched.instance_check import check_data, family_of
    from ddlsched.jsonio import gc_paused, read_json
    from ddlsched.registry import get_family

    family, path = args.family, args.target
    if args.legacy_file is not None:  # instance check FAMILY FILE
        if family is not None:
            raise DdlschedError("instance check: give the family once (FAMILY FILE or --family)")
        family, path = args.target, args.legacy_file
    if family is not None:
        get_family(family)  # an unknown family: one line before reading the file
    with gc_paused():
        data = read_json(path)  # its errors are one line naming the file
        if family is None:
            try:
                family = family_of(data)
            except DdlschedError as exc:
                raise DdlschedError(f"{path}: {exc}") from None
        report = check_data(data, family, source=str(path))
    if report.ok:
        print(f"{path}: valid {report.family} instance")
        return 0
    for violation in report.violations:
        print(violation)
    count = len(report.violations)
    print(f"{path}: {count} violation{'s' * (count != 1)} ({report.family} format)")
    raise DdlschedError(report.first_error or f"{path}: not a valid {report.family} instance")


def cmd_schema(args: argparse.Namespace) -> int:
    """Print the JSON Schema of a family's instance file."""
    from ddlsched.instance_check import instance_schema

    print(json.dumps(instance_schema(args.family), indent=2))
    return 0
