"""One codec for every document: frozen dataclasses <-> JSON-ready values, and JSON text.

`encode` and `decode` map a dataclass field by field (tuples as lists, nested dataclasses as
objects) and back, driven by the type hints, so a document's shape is its dataclass. `to_text`
is the one way flashmark writes a document as text (stdout, recovery files, exports): two-space
indents and a final newline, keys in the documents' own order; `compact` is the history's.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from typing import Any, Union


def encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [encode(item) for item in value]
    return value


@functools.cache
def _type_hints(kind: type) -> dict[str, Any]:
    # Resolving the hints is most of the time of reading a document back (the results
    # service reads one per upload); the classes never change, so once per class is enough.
    return typing.get_type_hints(kind)


def decode(kind: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(kind)
    if origin in (Union, types.UnionType):
        options = [arg for arg in typing.get_args(kind) if arg is not type(None)]
        return decode(options[0], value)
    if origin is tuple:
        item_kind = typing.get_args(kind)[0]
        return tuple(decode(item_kind, item) for item in value)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        hints = _type_hints(kind)
        known = {f.name for f in dataclasses.fields(kind) if f.init}
        arguments = {name: decode(hints[name], value[name]) for name in known if name in value}
        return kind(**arguments)
    if kind is float and isinstance(value, int):
        return float(value)
    return value


def to_text(document: Any) -> str:
    """A document (or a list of them) as people and tools read it."""
    return json.dumps(document, indent=2) + "\n"


def compact(document: Any) -> str:
    """A document on one line, as the history stores it."""
    return json.dumps(document)
