"""History database faults: garbage, locked, read-only, newer schema, missing folder.

Cases come from tests/cli/faults/cases.py (seeded; FLASHMARK_FAULTS_SEED, FLASHMARK_FAULTS_COUNT);
tests/cli/faults/harness.py runs them and says what did not hold.
"""

import pytest

from tests.cli.faults import cases as c

pytestmark = [pytest.mark.faults, pytest.mark.root, pytest.mark.fio]


CASES = c.database_cases()


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_an_unusable_history_stops_the_run_before_measuring_and_reading_creates_nothing(
    case, outcomes
):
    outcome = outcomes[case.id]
    assert outcome.held, outcome.report()
