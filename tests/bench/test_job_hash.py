"""The job hash a board plans (`flashmark run --job-hash`, nothing measured) is the one the
results service finds in the document of the run it then measures; any setting, version or
kind of target that differs gives another hash, and says which."""

from __future__ import annotations

import dataclasses
import json

from flashmark.bench.document import document_to_run
from flashmark.bench.job_hash import differences, job_hash, job_identity, run_job_identity
from flashmark.bench.model import Settings, TargetKind
from tests.cli_runner import flashmark


def test_the_planned_hash_is_the_measured_runs(tmp_path, recordings):
    env = {
        "FLASHMARK_FIO_REPLAY": str(recordings / "quick-a1-card-adaptive"),
        "FLASHMARK_DB": str(tmp_path / "history.sqlite3"),
    }
    folder = tmp_path / "card"
    folder.mkdir()
    planned = flashmark("run", str(folder), "--job-hash", env=env)
    assert planned.returncode == 0, planned.stderr
    plan = json.loads(planned.stdout)
    assert not list(folder.iterdir())  # nothing measured, nothing written
    assert plan["job"]["profile"] == "quick" and plan["job"]["target_kind"] == "file"
    assert plan["job"]["fio_version"].startswith("fio-")
    measured = flashmark("run", str(folder), "--json", env=env)
    assert measured.returncode == 0, measured.stderr
    run = document_to_run(json.loads(measured.stdout))
    assert run_job_identity(run) == plan["job"]
    assert job_hash(run_job_identity(run)) == plan["job_hash"]


def test_every_part_of_the_job_changes_the_hash():
    settings = Settings("quick", 4 << 20, 2, 1, 1, True, False)
    base = job_identity("0.1.0", "fio-3.33", TargetKind.FILE, settings)
    changed = [
        job_identity("0.1.1", "fio-3.33", TargetKind.FILE, settings),
        job_identity("0.1.0", "fio-3.35", TargetKind.FILE, settings),
        job_identity("0.1.0", "fio-3.33", TargetKind.DEVICE, settings),
        *(
            job_identity("0.1.0", "fio-3.33", TargetKind.FILE, dataclasses.replace(settings, **c))
            for c in (
                {"profile": "a1"}, {"size_bytes": 8 << 20}, {"runtime_s": 3}, {"ramp_s": 0},
                {"follow_ramp_s": 0}, {"direct": False}, {"destructive": True},
                {"ioengine": "psync"}, {"workload_scale": 0.1}, {"first_window_s": 3},
            )
        ),
    ]  # fmt: skip
    hashes = {job_hash(identity) for identity in changed}
    assert job_hash(base) not in hashes and len(hashes) == len(changed)
    assert job_hash(dict(reversed(base.items()))) == job_hash(base)  # the keys' order is not
    assert differences(changed[1], base) == ["fio_version 'fio-3.35', not 'fio-3.33'"]
