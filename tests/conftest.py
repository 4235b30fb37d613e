"""Test-wide settings: Hypothesis runs the same examples on every run.

A property test that draws new examples on every CI run can fail on one
run and pass on the next (a HiGHS seed that cannot prove a rar optimum
within the test's limit, say), and a red CI lands nothing. The ``ci``
profile (the default) is derandomized: each test sees a fixed sequence of
examples, so a failure is reproducible and a pass means the same thing
every time. ``HYPOTHESIS_PROFILE=explore`` draws fresh examples (and more
of them) for a local search for counterexamples.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from ddlsched.datadir import data_dir

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", max_examples=200, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def shared_data():
    """The shared data directory (traces, DNN profiles); the test is skipped without it
    (README, "Data": tests that need the data skip on a machine that lacks it)."""
    root = data_dir()
    if root is None:
        pytest.skip("shared data directory absent")
    return root
