"""What the plan and a run's header say about the size-bound sustained write: what bounds it,
the rest before it on a folder, and no time per test or preparation it does not have."""

from __future__ import annotations

import dataclasses

from flashmark.bench.model import Target
from flashmark.bench.plan import REST_STEP_NAME, Plan
from flashmark.bench.render.cells import settings_text
from flashmark.bench.sustained import SUSTAINED_REST_S, SUSTAINED_WRITE_NAME
from flashmark.units import MB, MiB
from tests.bench.synthetic import DEVICE, folder_target, plan_of
from tests.bench.test_speed_class_rate import log, measured, run_with


def plan(profile: str, target: Target, size_bytes: int | None = None) -> Plan:
    return plan_of(profile, target, size_bytes=size_bytes, destructive=True)


def test_the_sustained_profile_on_a_folder_rests_the_card_and_prepares_nothing(tmp_path):
    sustained = plan("sustained", folder_target(tmp_path), 112 * MiB)
    assert [step.name for step in sustained.steps()] == [REST_STEP_NAME, SUSTAINED_WRITE_NAME]
    assert sustained.prepare_job is None and sustained.expected_seconds() == SUSTAINED_REST_S
    assert sustained.describe() == (
        f"a {SUSTAINED_REST_S} s rest so that the card's write cache can empty, then "
        "sustained-write until its rate is steady or 112 MiB are written "
        f"(about {SUSTAINED_REST_S}s, plus as long as the device takes to write up to 112 MiB)"
    )


def test_the_sustained_profile_on_a_device_starts_at_once():
    sustained = plan("sustained", DEVICE, 112 * MiB)
    assert [step.name for step in sustained.steps()] == [SUSTAINED_WRITE_NAME]
    assert sustained.rest is None and sustained.prepare_job is None
    assert sustained.describe() == (
        "sustained-write until its rate is steady or 112 MiB are written "
        "(as long as the device takes to write up to 112 MiB)"
    )


def test_standard_names_its_size_bound_test_and_what_the_preparation_writes(tmp_path):
    standard = plan("standard", folder_target(tmp_path))
    names = [step.name for step in standard.steps()]
    assert names[:5] == [REST_STEP_NAME, SUSTAINED_WRITE_NAME, "seq-write", "prepare", "seq-read"]
    text = standard.describe()
    assert text.startswith(
        f"a {SUSTAINED_REST_S} s rest so that the card's write cache can empty, then "
        "sustained-write until its rate is steady or 1 GiB are written; seq-write 18 s; 8 tests x "
    )
    assert text.endswith(
        ", plus as long as the device takes to write up to 1 GiB, plus writing what "
        "sustained-write and seq-write leave of the 1 GiB area), then workloads pkg-install, "
        "pkg-remove, pkg-reinstall, cold-read"
    )
    assert "preparation" not in text and "9 tests" not in text  # no time for the size-bound


def test_a_runs_header_says_what_the_size_bound_test_ran_instead_of_a_time_per_test():
    run = run_with(measured(log((32 * MiB, 60 * MB), (80 * MiB, 20 * MB))))
    alone = dataclasses.replace(
        run,
        tests=run.tests[-1:],
        settings=dataclasses.replace(run.settings, profile="sustained", size_bytes=112 * MiB),
    )
    assert settings_text(alone) == (
        "sustained: area 112 MiB, sustained-write until its rate is steady or 112 MiB are "
        "written, direct I/O"
    )
    # Beside timed tests, both: the size-bound test's bound, then the timed tests' lengths.
    text = settings_text(run)
    assert "sustained-write until its rate is steady or " in text and " s per test after " in text
