"""A hung device: an emulated card stops answering during a timed test, the preparation,
sustained-write or a surface scan; each must end with exit 5 and one line within the bound.

Cases come from tests/cli/faults/hung_cases.py; tests/cli/faults/hung.py runs them and says what did
not hold.
"""

import pytest

from tests.cli.faults import hung_cases

pytestmark = [pytest.mark.faults, pytest.mark.root, pytest.mark.fio, pytest.mark.flash]


@pytest.mark.parametrize("case", hung_cases.hung_cases(), ids=lambda case: case.id)
def test_a_card_that_stops_answering_ends_the_operation_within_the_bound(case, outcomes):
    outcome = outcomes[case.id]
    assert outcome.held, outcome.report()
