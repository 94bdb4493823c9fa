"""Power cut and resume: a destructive surface scan of a card with a volatile write cache,
cut off (power cut, SIGKILL, Ctrl-C) at seeded moments of its passes, once or twice, resumes
from what is durable and ends as a clean scan of the honest card.

Cases come from tests/cli/faults/durable_cases.py (FLASHMARK_FAULTS_SEED); durable_harness.py runs
them and says what did not hold.
"""

import pytest

from tests.cli.faults import cases as c
from tests.cli.faults import durable_cases

pytestmark = [pytest.mark.faults, pytest.mark.root, pytest.mark.flash]


CASES = durable_cases.power_cut_cases(c.configured_seed())


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_a_scan_cut_off_resumes_from_what_is_durable_and_ends_clean(case, outcomes):
    outcome = outcomes[case.id]
    assert outcome.held, outcome.report()
