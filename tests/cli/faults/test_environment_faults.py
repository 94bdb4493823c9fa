"""Environment faults: stdout closed or full, no usable or a full temporary folder, /tmp or
the target filling up mid-run, no home folder, an unwritable state folder, non-UTF-8 locales
and names, paths beyond PATH_MAX: one line each, the documented exit status, nothing
measured lost.

Cases come from tests/cli/faults/durable_cases.py; durable_harness.py runs them and says what did
not hold.
"""

import pytest

from tests.cli.faults import durable_cases

pytestmark = [pytest.mark.faults, pytest.mark.root, pytest.mark.fio]


CASES = durable_cases.environment_cases()


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_an_environment_fault_is_one_line_and_loses_no_result(case, outcomes):
    outcome = outcomes[case.id]
    assert outcome.held, outcome.report()
