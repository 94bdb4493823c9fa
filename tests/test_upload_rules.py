"""An upload's table is made from the rules on a class's fields: by type for figures, as marked
for texts, never for a field marked not sent or a property left unmarked; a text without a
rule, or a class not marked `@uploaded`, is refused when the table is made."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from flashmark.codec import document, written
from flashmark.upload_rules import (
    MADE_TEXT,
    NOT_SENT,
    WITHHELD,
    Fields,
    NotSent,
    Withheld,
    table_of,
    upload,
    upload_as,
    uploaded,
)


@uploaded
@dataclass(frozen=True)
class Inner:
    count: int
    ratio: float | None
    note: str = field(metadata=upload(Withheld()))


@uploaded
@dataclass(frozen=True)
class Outer:
    local_id: int = field(metadata=NOT_SENT)
    name: str = field(metadata=upload(MADE_TEXT.or_withheld(), document(key="title")))
    inner: Inner
    flags: tuple[bool, ...]

    @property
    @written()
    def unmarked(self) -> str:
        return "kept here"

    @property
    @upload_as()
    @written(before="inner")
    def total(self) -> int:
        return 2


def test_the_table_follows_the_document_and_the_marks() -> None:
    sent = Fields(Outer).build(
        {
            "local_id": 7,
            "title": "made at /home/alice",
            "total": 2,
            "inner": {"count": 3, "ratio": None, "note": "x", "extra": 1},
            "flags": [True],
            "unmarked": "kept here",
        },
        "outer",
        lambda text: "a path" if "/" in text else None,
    )
    assert list(sent) == ["title", "total", "inner", "flags"]
    assert sent["title"] == WITHHELD
    assert sent["inner"] == {"count": 3, "ratio": None, "note": WITHHELD}
    assert dict(Fields(Outer).rows("outer"))["outer.flags[]"] == "true or false"


@uploaded
@dataclass(frozen=True)
class Unruled:
    said: str


@dataclass(frozen=True)
class Unmarked:
    count: int


def test_a_text_without_a_rule_and_an_unmarked_class_are_refused() -> None:
    with pytest.raises(TypeError, match=r"Unruled\.said: a field of <class 'str'>"):
        table_of(Unruled)
    with pytest.raises(TypeError, match=r"Unmarked\.count: its class is not marked"):
        table_of(Unmarked)


INNER = {"count": 3, "ratio": 0.5, "note": ""}
WHOLE = "not a whole number within 64 bits"


@pytest.mark.parametrize(
    ("changed", "place", "why"),
    [
        ({"total": 2**63}, "total", WHOLE),
        ({"total": -(2**63)}, "total", WHOLE),
        ({"total": True}, "total", WHOLE),
        ({"total": 2.0}, "total", WHOLE),
        ({"inner": {**INNER, "count": "3"}}, "inner.count", WHOLE),
        ({"inner": {**INNER, "ratio": float("nan")}}, "inner.ratio", "not a finite number"),
        ({"inner": {**INNER, "ratio": 1e19}}, "inner.ratio", "not a finite number"),
        ({"inner": {**INNER, "ratio": False}}, "inner.ratio", "not a finite number"),
        ({"flags": [1]}, "flags[0]", "not true or false"),
    ],
)
def test_figures_and_flags_outside_what_a_document_holds_are_not_sent(
    changed: dict[str, object], place: str, why: str
) -> None:
    """By type, as the codec reads them: true or false, a whole number within ±(2^63 - 1), a
    number within ±10^18; a value that is none of these is refused, naming its place."""
    document = {"title": "t", "total": 2, "inner": INNER, "flags": [True], **changed}
    with pytest.raises(NotSent) as refused:
        Fields(Outer).build(document, "outer", lambda text: None)
    assert (refused.value.where, refused.value.why) == (f"outer.{place}", why)
    rows = dict(Fields(Outer).rows("outer"))
    assert (rows["outer.total"], rows["outer.inner.ratio"]) == (
        "a whole number within 64 bits",
        "a number within ±1e+18, or null",
    )
