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
