"""The result document keeps the exact-window fields and reads documents saved before them."""

import dataclasses
import json

from flashmark.bench.document import document_to_run, run_to_document
from flashmark.bench.profiles import SEQ_WRITE
from tests.bench.parsed import parse_test_output
from tests.bench.synthetic import SAVED, saved_run
from tests.bench.test_parse_recorded import replay


def test_intervals_and_durable_rates_survive_saving_and_reading(recordings):
    job, output = replay(recordings, "quick-a1-card", SEQ_WRITE)
    measured = parse_test_output(SEQ_WRITE, job, output)
    run = saved_run()
    tests = tuple(
        dataclasses.replace(t, write=measured.write) if t.spec.name == "seq-write" else t
        for t in run.tests
    )
    document = run_to_document(dataclasses.replace(run, tests=tests))
    saved = document["tests"][0]["write"]
    assert measured.write is not None and measured.write.bw_ci95 is not None
    assert saved["ci95"]["samples"] == measured.write.bw_ci95.samples >= 8
    assert saved["ci95"]["confidence"] == 0.95 and saved["decision"] is None  # fixed length
    assert saved["ci95"]["bw_bytes"][0] <= saved["bw_bytes"] <= saved["ci95"]["bw_bytes"][1]
    assert saved["accepted_bw_bytes"] >= saved["bw_bytes"] and saved["fsync_ms"] >= 0
    read_back = document_to_run(json.loads(json.dumps(document)))
    assert next(t for t in read_back.tests if t.spec.name == "seq-write").write == measured.write


def test_the_time_of_runs_not_kept_is_saved_and_read_back():
    document = json.loads(SAVED.read_text())
    run = document_to_run(document)
    assert {t.discarded_s for t in run.tests} == {0.0}  # recorded by replay: nothing discarded
    tests = (dataclasses.replace(run.tests[0], discarded_s=4.312), *run.tests[1:])
    saved = run_to_document(dataclasses.replace(run, tests=tests))
    assert [t["discarded_s"] for t in saved["tests"]][:2] == [4.312, 0.0]
    read_back = document_to_run(json.loads(json.dumps(saved)))
    assert read_back.tests[0].discarded_s == 4.312
