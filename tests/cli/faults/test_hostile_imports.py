"""Hostile imports: `flashmark import` of a symlink to /dev/zero, a FIFO, a folder,
/proc/kcore, a pipe that never closes, an oversized, deeply nested, binary or malformed file:
exit 2 in one line, within seconds and bounded memory, nothing added to the history.

Cases come from tests/cli/faults/durable_cases.py; durable_harness.py runs them and says what did
not hold.
"""

import pytest

from tests.cli.faults import durable_cases

pytestmark = [pytest.mark.faults, pytest.mark.root]


CASES = durable_cases.import_cases()


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_a_hostile_file_is_refused_in_one_line_without_reading_it_whole(case, outcomes):
    outcome = outcomes[case.id]
    assert outcome.held, outcome.report()
