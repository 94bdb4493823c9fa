"""Hostile input to a real results service, on SQLite and on PostgreSQL: numbers, Unicode and
control characters, sizes, unknown keys and wrong types, bad tokens, hostile headers, CSV
injection, storage faults, killed processes, passwords in output, and campaign names and board
labels.

Cases come from tests/server/hostile/cases.py; tests/server/hostile/harness.py runs them (all
of an engine's at once) and says what did not hold. `python benchmarks/hostile_service.py`
prints the table.
"""

from __future__ import annotations

import pytest

from tests.server.hostile import cases as c

pytestmark = pytest.mark.hostile


def _cases(category: str) -> list[object]:
    """Each case of the category on each engine it applies to."""
    return [
        pytest.param(
            case,
            engine,
            id=f"{case.id}-{engine}",
            marks=[pytest.mark.postgres] if engine == "postgres" else [],
        )
        for case in c.all_cases()[category]
        for engine in c.engines_of(case)
    ]


def _judge(case: c.Case, engine: str, hostile_outcomes) -> None:
    outcome = hostile_outcomes(engine)[case.id]
    assert outcome.held, outcome.report()


@pytest.mark.parametrize(("case", "engine"), _cases(c.NUMBERS))
def test_numbers_beyond_range_are_refused_naming_the_field(case, engine, hostile_outcomes):
    _judge(case, engine, hostile_outcomes)


@pytest.mark.parametrize(("case", "engine"), _cases(c.UNICODE))
def test_invalid_unicode_and_control_characters_are_refused(case, engine, hostile_outcomes):
    _judge(case, engine, hostile_outcomes)


@pytest.mark.parametrize(("case", "engine"), _cases(c.SIZES))
def test_sizes_and_lengths_are_bounded_and_pages_stay_small(case, engine, hostile_outcomes):
    _judge(case, engine, hostile_outcomes)


@pytest.mark.parametrize(("case", "engine"), _cases(c.SHAPES))
def test_unknown_keys_are_dropped_and_wrong_types_refused(case, engine, hostile_outcomes):
    _judge(case, engine, hostile_outcomes)


@pytest.mark.parametrize(("case", "engine"), _cases(c.AUTH))
def test_bad_tokens_are_refused_and_slowed(case, engine, hostile_outcomes):
    _judge(case, engine, hostile_outcomes)


@pytest.mark.parametrize(("case", "engine"), _cases(c.HEADERS))
def test_untrusted_hosts_make_no_links_and_no_page_can_be_framed(case, engine, hostile_outcomes):
    _judge(case, engine, hostile_outcomes)


@pytest.mark.parametrize(("case", "engine"), _cases(c.CSV))
def test_no_csv_cell_starts_a_formula_at_any_separator(case, engine, hostile_outcomes):
    _judge(case, engine, hostile_outcomes)


@pytest.mark.parametrize(("case", "engine"), _cases(c.STORAGE))
def test_a_missing_replaced_or_restarted_database_loses_no_acknowledged_upload(
    case, engine, hostile_outcomes
):
    _judge(case, engine, hostile_outcomes)


@pytest.mark.parametrize(("case", "engine"), _cases(c.PROCESSES))
def test_no_process_serves_after_its_service_is_killed(case, engine, hostile_outcomes):
    _judge(case, engine, hostile_outcomes)


@pytest.mark.parametrize(("case", "engine"), _cases(c.SECRETS))
def test_no_password_or_token_appears_in_output(case, engine, hostile_outcomes):
    _judge(case, engine, hostile_outcomes)


@pytest.mark.parametrize(("case", "engine"), _cases(c.CAMPAIGNS))
def test_campaign_names_and_labels_are_checked_apart_and_shown_escaped(
    case, engine, hostile_outcomes
):
    _judge(case, engine, hostile_outcomes)
