"""Races by another user: a real unprivileged user renames, links and swaps what a root run
writes in a folder it can write, while the run writes there.

Cases come from tests/cli/faults/race_cases.py; tests/cli/faults/races.py runs them and says
what did not hold.
"""

import pytest

from tests.cli.faults import race_cases

pytestmark = [pytest.mark.faults, pytest.mark.root, pytest.mark.fio]


@pytest.mark.parametrize("case", race_cases.race_cases(), ids=lambda case: case.id)
def test_another_users_race_never_makes_root_write_outside_its_area(case, outcomes):
    outcome = outcomes[case.id]
    assert outcome.held, outcome.report()
