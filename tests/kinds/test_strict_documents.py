"""The one check of every document that comes in (flashmark.kinds.strict): what flashmark
writes passes unchanged, every hostile value is refused naming its field by JSON pointer,
unknown keys are dropped, and `flashmark import` refuses what `show` could not draw."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from flashmark.kinds.registry import DOCUMENT_KINDS
from flashmark.kinds.strict import (
    FILE_TEXT_LIMIT,
    IDENTIFIER_LIMIT,
    LIST_LIMITS,
    TEXT_LIMIT,
    DocumentInvalid,
    check_document,
    parse_json,
)
from tests.capacity.test_passport import capacity_document
from tests.cli_runner import flashmark
from tests.conftest import DATA

RESULTS = ("quick-a1-card", "standard-fast-card", "full-vm-disk")


def recorded(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((DATA / "report" / f"{name}.json").read_text())
    return document


def written_documents() -> list[dict[str, Any]]:
    """Documents of every kind as flashmark writes them."""
    from flashmark.powercut.result import to_document as powercut_document
    from flashmark.surface.result import to_document
    from tests.powercut.results import cycle, lying, result_of
    from tests.surface.test_scan_engine import card, full

    return [
        *(recorded(name) for name in RESULTS),
        recorded("monitor-true"),
        capacity_document("0" * 32, "genuine", 62277025792),
        to_document(full(card(real_bytes=4 * 2**20))),
        powercut_document(result_of([cycle(1), lying(2)])),
        json.loads((DATA / "report/kinds/health.json").read_text(encoding="utf-8")),
        json.loads((DATA / "report/kinds/doctor.json").read_text(encoding="utf-8")),
    ]


def check(document: Any) -> Any:
    return check_document(parse_json(json.dumps(document)), DOCUMENT_KINDS)


def refused(document: Any) -> DocumentInvalid:
    with pytest.raises(DocumentInvalid) as caught:
        check(document)
    return caught.value


def test_every_kind_flashmark_writes_passes_unchanged():
    documents = written_documents()
    assert {document["schema"] for document in documents} >= set(DOCUMENT_KINDS) - {
        "flashmark.workloads/1"  # a workload run is covered through a benchmark's workloads
    }
    for document in documents:
        checked = check(document)
        assert checked.dropped == (), document["schema"]
        assert checked.document == document


@pytest.mark.parametrize(
    ("path", "value", "pointer"),
    [
        (("tests", 0, "elapsed_s"), "1e400", "/tests/0/elapsed_s"),  # JSON text: infinity
        (("target", "capacity_bytes"), "18446744073709551616", "/target/capacity_bytes"),
        (("settings", "runtime_s"), "-1e19", "/settings/runtime_s"),
        (("host", "hostname"), '"a\\u0000b"', "/host/hostname"),
        (("host", "hostname"), '"\\ud800"', "/host/hostname"),
        (("host", "kernel"), '"6.1\\u001b[31m"', "/host/kernel"),
        (("host", "kernel"), '"6.1\\u0085"', "/host/kernel"),  # C1 (NEL)
        (("host", "machine"), '"\\u202egnp.exe"', "/host/machine"),
        (("target", "given"), json.dumps("x" * (TEXT_LIMIT + 1)), "/target/given"),
        (("settings", "profile"), json.dumps("q" * (IDENTIFIER_LIMIT + 1)), "/settings/profile"),
        (("tests", 0, "job"), json.dumps("[x]\n\x07"), "/tests/0/job"),
        (("tests", 0, "job"), json.dumps("x" * (FILE_TEXT_LIMIT + 1)), "/tests/0/job"),
        (("settings", "runtime_s"), '"8"', "/settings/runtime_s"),
        (("tests", 0, "read"), "[]", "/tests/0"),
    ],
)
def test_a_hostile_value_is_refused_naming_its_field(path, value, pointer):
    document = recorded("quick-a1-card")
    marker = "__VALUE__"
    where: Any = document
    for key in path[:-1]:
        where = where[key]
    where[path[-1]] = marker
    text = json.dumps(document).replace(f'"{marker}"', value)
    with pytest.raises(DocumentInvalid) as caught:
        check_document(parse_json(text.encode("utf-8", "surrogatepass")), DOCUMENT_KINDS)
    assert caught.value.pointer.startswith(pointer), (caught.value.pointer, str(caught.value))
    assert caught.value.problem == "invalid-document"


def test_a_file_text_keeps_its_lines():
    document = recorded("quick-a1-card")
    assert "\n" in document["tests"][0]["job"]
    document["tests"][0]["job"] += "\t# a comment\n"
    assert check(document).document["tests"][0]["job"].endswith("\t# a comment\n")


@pytest.mark.parametrize(
    "text",
    [b'{"a": NaN}', b'{"a": -Infinity}', b"\xff", b"[" * 100_000, b"{", b"1" * 5000],
)
def test_text_that_is_not_json_is_refused(text):
    with pytest.raises(DocumentInvalid) as caught:
        parse_json(text)
    assert caught.value.problem == "invalid-json"


def test_a_key_given_twice_is_refused():
    text = json.dumps(recorded("quick-a1-card")).replace(
        '"settings": {', '"settings": {"profile": "a1", ', 1
    )
    with pytest.raises(DocumentInvalid) as caught:
        check_document(parse_json(text), DOCUMENT_KINDS)
    assert caught.value.pointer == "/settings/profile"


def test_unknown_keys_are_dropped_and_named():
    document = recorded("quick-a1-card")
    document["x-newer"] = {"anything": [1, 2]}
    document["settings"]["future_option"] = True
    document["tests"][1]["read"]["new_figure"] = 1.5
    checked = check(document)
    assert checked.dropped == ("/settings/future_option", "/tests/1/read/new_figure", "/x-newer")
    assert checked.document == recorded("quick-a1-card")


def test_a_reader_that_converts_types_does_not_hide_a_wrong_one():
    document = capacity_document("0" * 32, "genuine", 1000)
    document["claimed_bytes"] = "62277025792"  # CapacityResult.from_dict would take int("...")
    assert refused(document).pointer == "/claimed_bytes"


def test_lists_are_bounded():
    document = recorded("quick-a1-card")
    document["warnings"] = ["w"] * (LIST_LIMITS["warnings"] + 1)
    assert refused(document).pointer == "/warnings"


def test_other_schemas_and_shapes_are_refused():
    assert refused([recorded("quick-a1-card")]).problem == "invalid-document"
    assert refused({**recorded("quick-a1-card"), "schema": "x/1"}).problem == "unsupported-schema"
    error = refused({**recorded("quick-a1-card"), "schema": ["flashmark.result/1"]})
    assert error.problem == "unsupported-schema"


def test_import_refuses_what_show_report_and_export_could_not_draw(tmp_path: Path):
    env = {"FLASHMARK_DB": str(tmp_path / "history.sqlite3")}
    text = (DATA / "report" / "quick-a1-card.json").read_text()
    hostile = tmp_path / "hostile.json"
    hostile.write_text(text.replace('"elapsed_s": ', '"elapsed_s": 1e400, "was": ', 1))
    done = flashmark("import", str(hostile), env=env)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "/tests/0/elapsed_s" in done.stderr
    assert not (tmp_path / "history.sqlite3").exists()

    newer = copy.deepcopy(recorded("quick-a1-card"))
    newer["x-newer"] = "kept out"
    accepted = tmp_path / "newer.json"
    accepted.write_text(json.dumps(newer))
    done = flashmark("import", str(accepted), env=env)
    assert done.returncode == 0, done.stderr
    for command in (
        ("show", "1", "--format", "json"),
        ("report", "1", "-o", str(tmp_path / "r.html")),
        ("export", "1", "-o", str(tmp_path / "r.csv")),
    ):
        shown = flashmark(*command, env=env)
        assert shown.returncode == 0, (command, shown.stderr)
    stored = json.loads(flashmark("show", "1", "--format", "json", env=env).stdout)
    assert "x-newer" not in stored
