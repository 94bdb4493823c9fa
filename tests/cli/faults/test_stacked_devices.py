"""`run /dev/loopB --destructive --yes` where loopB sits on, under or beside a mounted,
partitioned or swapped-on device.

Cases come from tests/cli/faults/cases.py (seeded; FLASHMARK_FAULTS_SEED, FLASHMARK_FAULTS_COUNT);
tests/cli/faults/harness.py runs them and says what did not hold.
"""

import pytest

from tests.cli.faults import cases as c

pytestmark = [pytest.mark.faults, pytest.mark.root, pytest.mark.fio]


@pytest.mark.parametrize("case", c.stack_cases(), ids=lambda case: case.id)
def test_destructive_runs_refuse_a_loop_device_stacked_on_or_under_something_in_use(case, outcomes):
    outcome = outcomes[case.id]
    assert outcome.held, outcome.report()
