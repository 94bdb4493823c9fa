"""Folder names that fio's job-file parser or a shell would read as syntax.

Cases come from tests/cli/faults/cases.py (seeded; FLASHMARK_FAULTS_SEED, FLASHMARK_FAULTS_COUNT);
tests/cli/faults/harness.py runs them and says what did not hold.
"""

import pytest

from tests.cli.faults import cases as c

pytestmark = [pytest.mark.faults, pytest.mark.root, pytest.mark.fio]


CASES = c.path_cases(c.configured_seed(), generated=max(2, c.configured_count() // 50))


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_a_hostile_folder_name_is_measured_and_nothing_beside_it_is_touched(case, outcomes):
    outcome = outcomes[case.id]
    assert outcome.held, outcome.report()
