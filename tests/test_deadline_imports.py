"""``deadline.import_within``: an import the deadline cannot hold is waited for only until
the deadline, and finishes in the background for the next caller."""

from __future__ import annotations

import sys

import pytest

from ddlsched.deadline import Deadline, import_within
from ddlsched.errors import TimeLimitReached


def test_an_import_longer_than_the_deadline_stops_at_the_deadline(tmp_path, monkeypatch):
    (tmp_path / "slow_module_for_import_within.py").write_text(
        "import threading\nthreading.Event().wait(1.0)\nVALUE = 7\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TimeLimitReached, match="slow_module_for_import_within"):
        import_within("slow_module_for_import_within", Deadline(0.01), "a test")
    import_within("slow_module_for_import_within", Deadline.unlimited(), "a test")
    assert sys.modules["slow_module_for_import_within"].VALUE == 7
    monkeypatch.delitem(sys.modules, "slow_module_for_import_within")


def test_an_imported_module_is_not_waited_for():
    import_within("math", Deadline(1e-9), "a test")  # already there: no error at all
