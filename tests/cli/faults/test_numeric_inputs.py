"""nan, inf, -1, overflow, empty and garbage for every numeric option of every command.

Cases come from tests/cli/faults/cases.py (seeded; FLASHMARK_FAULTS_SEED, FLASHMARK_FAULTS_COUNT);
tests/cli/faults/harness.py runs them and says what did not hold.
"""

import pytest

from tests.cli.faults import cases as c

pytestmark = [pytest.mark.faults, pytest.mark.root, pytest.mark.fio]


@pytest.mark.parametrize("case", c.numeric_cases(), ids=lambda case: case.id)
def test_a_hostile_number_is_refused_with_exit_2_and_one_line(case, outcomes):
    outcome = outcomes[case.id]
    assert outcome.held, outcome.report()


def test_the_numeric_options_known_today_are_all_discovered():
    """Discovery reads the click commands; a renamed type must not silently drop cases."""
    found = {(p.command, p.option) for p in c.numeric_parameters()}
    known = {
        ("run", "--size"),
        ("run", "--runtime"),
        ("run", "--ramp"),
        ("run", "--workload-scale"),
        ("history", "--limit"),
        ("show", "ARG:result_id"),
        ("monitor", "--interval"),
        ("monitor", "--count"),
        ("monitor", "--timeout"),
        ("workload", "--scale"),
        ("workload", "--interval"),
        ("export", "ARG:result_ids"),
        ("compare", "ARG:result_ids"),
        ("report", "ARG:result_ids"),
    }
    assert known <= found, f"not discovered: {sorted(known - found)}"
