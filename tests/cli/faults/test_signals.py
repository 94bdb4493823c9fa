"""Signals (INT, TERM, HUP, KILL to flashmark, KILL to fio) at seeded random moments of
`run`, `workload` and `monitor`.

Cases come from tests/cli/faults/cases.py (seeded; FLASHMARK_FAULTS_SEED, FLASHMARK_FAULTS_COUNT);
tests/cli/faults/harness.py runs them and says what did not hold.
"""

import pytest

from tests.cli.faults import cases as c

pytestmark = [pytest.mark.faults, pytest.mark.root, pytest.mark.fio]


@pytest.mark.parametrize(
    "case", c.signal_cases(c.configured_seed(), c.configured_count()), ids=lambda case: case.id
)
def test_a_signal_at_a_random_moment_gives_the_documented_exit_and_leaves_nothing(case, outcomes):
    outcome = outcomes[case.id]
    assert outcome.held, outcome.report()
