"""The one codec (flashmark.codec): every kind's document is its dataclasses, a document read
and written again is the same text, every key is required, and a malformed one names what is
wrong."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from flashmark.bench.document import document_to_run
from flashmark.codec import Codec, decode, document, encode, to_text, written
from flashmark.errors import ResultFormatError
from flashmark.kinds.registry import DOCUMENT_KINDS, kind_of
from flashmark.stats import Verdict
from tests.conftest import DATA


def recorded(path: Any) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text())
    return document


RECORDED = [
    path
    for path in sorted([*(DATA / "report").glob("*.json"), *(DATA / "upload").glob("*.json")])
    if isinstance(recorded(path), dict) and recorded(path).get("schema") in DOCUMENT_KINDS
]


@pytest.mark.parametrize(
    "path",
    RECORDED,
    ids=lambda path: path.name,
)
def test_a_document_read_and_written_again_is_the_same_text(path):
    kind = kind_of(recorded(path))
    written_once = kind.to_document(kind.from_document(recorded(path)))
    written_twice = kind.to_document(kind.from_document(json.loads(to_text(written_once))))
    assert to_text(written_twice) == to_text(written_once)


def test_a_missing_key_is_named():
    document = recorded(DATA / "upload" / "sd-card-run.json")
    del document["tests"][0]["elapsed_s"]
    with pytest.raises(ResultFormatError, match=r"result document is malformed.*'elapsed_s'"):
        document_to_run(document)


@dataclass(frozen=True)
class Point:
    name: str
    at_s: float = field(metadata=document(key="at", digits=2))


@dataclass(frozen=True, kw_only=True)
class Trace:
    points: tuple[Point, ...] = field(metadata=document(keyed_by="name"))
    span: tuple[float, float]
    note: str | None = field(default=None, metadata=document(omit_none=True))
    scratch: int = field(default=7, metadata=document(saved=False))

    @property
    @written(before="span")
    def count(self) -> int:
        return len(self.points)


TRACE = Codec(Trace, "example.trace/1", "trace")


def test_a_dataclass_is_written_in_the_shape_its_metadata_gives_and_read_back():
    trace = Trace(points=(Point("a", 1.234), Point("b", 2.0)), span=(1.0, 2.0))
    written_out = TRACE.write(trace)
    assert list(written_out) == ["schema", "points", "count", "span"]
    assert written_out["points"] == {"a": {"at": 1.23}, "b": {"at": 2.0}}
    assert TRACE.read(written_out) == Trace(
        points=(Point("a", 1.23), Point("b", 2.0)), span=(1.0, 2.0)
    )
    with pytest.raises(ResultFormatError, match="KeyError: 'span'"):
        TRACE.read({"schema": "example.trace/1", "points": {}})
    assert encode(Trace(points=(), span=(0, 1), note="n"))["note"] == "n"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"schema": "example.trace/2"}, "not a example.trace/1 document"),
        ({"span": [1.0]}, "trace span must hold 2 values, not 1"),
        ({"points": [{"at": 1}]}, "trace points must be an object, not 'list'"),
        ({"points": {"a": {}}}, "KeyError: 'at'"),
        ({"points": {"a": {"at": "1.5"}}}, r'WrongType: must be a number, not "1.5"'),
        ({"span": [1.0, 2e18]}, r"must be a number within ±1e\+18, not 2e\+18"),
        ({"span": [1.0, float("nan")]}, r"must be a number within ±1e\+18, not NaN"),
        ({"note": 3}, "WrongType: must be text, not 3"),
    ],
)
def test_a_malformed_document_is_refused_naming_what_is_wrong(change, message):
    good = TRACE.write(Trace(points=(Point("a", 1.0),), span=(1.0, 2.0)))
    with pytest.raises(ResultFormatError, match=message):
        TRACE.read(good | change)


def test_a_value_of_another_type_is_refused_at_its_place_never_converted():
    good = TRACE.write(Trace(points=(Point("a", 1.0), Point("b", 2.0)), span=(1.0, 2.0)))
    with pytest.raises(ResultFormatError) as caught:
        TRACE.read(good | {"points": {"a": {"at": 1.0}, "b": {"at": True}}})
    assert caught.value.where == ("points", "b", "at")  # type: ignore[attr-defined]
    series = decode(tuple[float, ...], [1, 2.5] * 1000)
    assert series[:2] == (1, 2.5) and type(series[0]) is int
    with pytest.raises(TypeError) as wrong:
        decode(tuple[float, ...], [1.0] * 1000 + ["2"])
    assert wrong.value.where == (1000,)  # type: ignore[attr-defined]
    assert decode(Trace, good | {"note": None}).note is None  # null reads as the absent key


def test_an_unknown_enum_value_names_the_known_values():
    with pytest.raises(ValueError, match=r"unknown value 'maybe' \(known: pass, fail, uncertain"):
        decode(Verdict, "maybe")
