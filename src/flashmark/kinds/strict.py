"""The one check of every document that comes in from outside (`flashmark import`, the results
service's uploads), so that what either accepts can be shown, exported and stored alike.

    parse_json(data)         UTF-8, JSON as RFC 8259 has it (no NaN), no key twice, MAX_DEPTH
    check_document(document) every value bounded and clean, then the kind's own reader (which
                             checks every field's type); unknown keys dropped (`Checked.dropped`: a
                             schema keeps its version when readers may ignore additions)
A failure raises DocumentInvalid naming the field by its JSON pointer (RFC 6901).
"""

from __future__ import annotations

import json
import math
import re
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flashmark.codec import MAX_FLOAT, WrongType, fits, shown
from flashmark.errors import ExitStatus, FlashmarkError, ResultFormatError

# Documents nest about 8 deep (a test's direction's interval); the parser recurses per level.
MAX_DEPTH = 32
# Text: a file path is the longest single line a document holds (PATH_MAX, limits.h).
TEXT_LIMIT = 4096
# Names the service shows in every row of a page, searches by and puts in links: the profile,
# the device kind (the medium), the test pattern, the schema. As long as a search text.
IDENTIFIER_LIMIT = 200
IDENTIFIER_KEYS = frozenset({"schema", "profile", "kind", "pattern", "ioengine"})
# The text of a file (a test's fio job file): newlines and tabs allowed, longer.
FILE_TEXT_LIMIT = 65536
FILE_TEXT_KEYS = frozenset({"job"})
KEY_LIMIT = 128
# Lists: the report draws a section per test and a table row per grade, warning and finding,
# so their number bounds what one result page costs (the full profile has 41 tests); series
# of samples are bounded by the size of the document alone.
LIST_LIMITS = {
    "tests": 256,
    "tests_skipped": 256,
    "workloads": 64,
    "warnings": 256,
    "findings": 256,
    "notes": 256,
    "devices": 64,
    "layers": 64,
    "points": 256,
}
LIST_LIMIT = 1_000_000

# C0 and C1 controls and DEL (Unicode category Cc), lone surrogates (not Unicode scalar values:
# UTF-8 cannot hold them), and the bidirectional embedding, override and isolate controls,
# which make a page show text in another order than it is stored (CVE-2021-42574).
_REORDERING = "\u202a-\u202e\u2066-\u2069"
_UNSAFE_IN_TEXT = re.compile(f"[\x00-\x1f\x7f-\x9f\ud800-\udfff{_REORDERING}]")
# A file's text keeps its tabs and newlines (\t \n); no other control character.
_UNSAFE_IN_FILE_TEXT = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff{_REORDERING}]")
# A document imported on this machine holds what flashmark itself wrote, and a folder's name may
# hold any character but NUL: its text may too (its renderers escape what a terminal or a page
# would act on). Lone surrogates stay refused: the history (UTF-8 text) cannot store them.
_UNSAFE_IN_OWN_TEXT = re.compile("[\x00\ud800-\udfff]")


class DocumentInvalid(FlashmarkError):
    """A document that is not accepted. `pointer` names the field (RFC 6901; "" is the whole
    document), `reason` says what is wrong with it, `problem` is the kind: invalid-json (the
    text), unsupported-schema, invalid-document (a field)."""

    exit_status = ExitStatus.USAGE

    def __init__(self, problem: str, reason: str, pointer: str = "") -> None:
        super().__init__(f"{pointer}: {reason}" if pointer else reason)
        self.problem = problem
        self.reason = reason
        self.pointer = pointer


@dataclass(frozen=True)
class Checked:
    """A document that passed: itself without unknown keys, what they were, and the typed
    object its kind's reader made of it (a Run for a benchmark result)."""

    document: dict[str, Any]
    dropped: tuple[str, ...]  # JSON pointers of the keys dropped
    value: object


def pointer(path: Sequence[str | int]) -> str:
    """The JSON pointer of a path of keys and indexes ('~' and '/' escaped, RFC 6901 §3)."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


# -- 1. the text ---------------------------------------------------------------------------------


class _Repeated(dict[str, Any]):
    """An object in which a key appeared twice (JSON leaves that to the reader: RFC 8259
    §4). Found by the value check, which knows where it is."""

    repeated: str = ""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) == len(pairs):
        return value
    seen: set[str] = set()
    repeated = _Repeated(value)
    repeated.repeated = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
    return repeated


def _refuse_constant(name: str) -> None:
    raise ValueError(f"the JSON holds {name}, which is not a number (RFC 8259 has none)")


def parse_json(data: bytes | str) -> Any:
    """JSON text as a document reads it; DocumentInvalid("invalid-json") when it is not."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise DocumentInvalid(
                "invalid-json", f"the text is not UTF-8 (byte {error.start}: {error.reason})"
            ) from None
    try:
        return json.loads(data, parse_constant=_refuse_constant, object_pairs_hook=_object)
    except json.JSONDecodeError as error:
        raise DocumentInvalid(
            "invalid-json",
            f"not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})",
        ) from None
    except RecursionError:
        raise DocumentInvalid("invalid-json", f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as error:  # NaN, Infinity; a whole number of over 4300 digits
        raise DocumentInvalid("invalid-json", str(error)) from None


# -- 2. every value ------------------------------------------------------------------------------


def check_values(document: Any, *, own: bool = False) -> None:
    """Every number, text, key and list of a parsed document within the bounds above (`own`:
    a document of flashmark's from this machine, whose text may hold control characters)."""
    _walk(document, [], "", 0, own)


def _fail(path: list[str | int], reason: str) -> typing.NoReturn:
    raise DocumentInvalid("invalid-document", reason, pointer(path))


def _walk(value: Any, path: list[str | int], key: str, depth: int, own: bool) -> None:
    kind = type(value)
    if kind is str:
        _check_text(value, path, key, own)
    elif kind is float or kind is int:
        _check_number(value, path)
    elif kind is dict or kind is _Repeated:
        if depth >= MAX_DEPTH:
            _fail(path, f"nested deeper than {MAX_DEPTH} levels")
        if kind is _Repeated:
            _fail([*path, value.repeated], "this key appears twice in its object")
        for name, item in value.items():
            if len(name) > KEY_LIMIT or _UNSAFE_IN_TEXT.search(name):
                _fail([*path, name[:KEY_LIMIT]], _text_problem(name, KEY_LIMIT, "a key"))
            path.append(name)
            _walk(item, path, name, depth + 1, own)
            path.pop()
    elif kind is list:
        if depth >= MAX_DEPTH:
            _fail(path, f"nested deeper than {MAX_DEPTH} levels")
        limit = LIST_LIMITS.get(key, LIST_LIMIT)
        if len(value) > limit:
            _fail(path, f"may hold at most {limit} entries, not {len(value)}")
        for index, item in enumerate(value):
            item_kind = type(item)
            if item_kind is float or item_kind is int:  # series of samples: most of the values
                if not -MAX_FLOAT <= item <= MAX_FLOAT:
                    _check_number(item, [*path, index])
            else:
                path.append(index)
                _walk(item, path, key, depth + 1, own)
                path.pop()
    elif value is not None and kind is not bool:
        _fail(path, f"{kind.__name__} is not a JSON value")


def _check_number(value: float, path: list[str | int]) -> None:
    if type(value) is int:
        if not fits(int, value):
            _fail(path, "a whole number must fit in 64 bits (at most 9223372036854775807)")
    elif not math.isfinite(value):
        _fail(path, "the number is beyond the range of a float (read as infinity)")
    elif not -MAX_FLOAT <= value <= MAX_FLOAT:
        _fail(path, f"the number {value:g} is beyond ±{MAX_FLOAT:g}, more than any figure")


def _check_text(value: str, path: list[str | int], key: str, own: bool) -> None:
    if key in FILE_TEXT_KEYS:
        limit, unsafe = FILE_TEXT_LIMIT, _UNSAFE_IN_FILE_TEXT
    else:
        limit = IDENTIFIER_LIMIT if key in IDENTIFIER_KEYS else TEXT_LIMIT
        unsafe = _UNSAFE_IN_TEXT
    if own:
        unsafe = _UNSAFE_IN_OWN_TEXT
    if len(value) > limit or unsafe.search(value):
        _fail(path, _text_problem(value, limit, "text", unsafe))


def _text_problem(
    value: str, limit: int, what: str, unsafe: re.Pattern[str] = _UNSAFE_IN_TEXT
) -> str:
    if len(value) > limit:
        return f"{what} may have at most {limit} characters, not {len(value)}"
    found = unsafe.search(value)
    assert found is not None
    character = found.group()
    if "\ud800" <= character <= "\udfff":
        return f"{what} holds a lone surrogate (U+{ord(character):04X}): not valid Unicode"
    return (
        f"{what} holds the control character U+{ord(character):04X} at {found.start()} "
        "(control characters are refused; newlines only in a file's text)"
    )


# -- 3. the schema -------------------------------------------------------------------------------


@dataclass(frozen=True)
class DocumentKind:
    """How a kind of document is read into its typed object and written back: the writer's
    document holds every key this version knows (the others are dropped)."""

    read: Callable[[Mapping[str, Any]], object]
    write: Callable[[Any], Any]


def check_document(
    document: Any, kinds: Mapping[str, DocumentKind], *, own: bool = False
) -> Checked:
    """A parsed document checked whole against the kinds accepted here (by "schema"); `own`
    for a document of flashmark's read on this machine (`flashmark import`), whose text may
    hold the control characters a folder's name can."""
    if not isinstance(document, dict):
        raise DocumentInvalid(
            "invalid-document", f"a document is one JSON object, not {_json_type(document)}"
        )
    check_values(document, own=own)
    schema = document.get("schema")
    kind = kinds.get(schema) if isinstance(schema, str) else None
    if kind is None:
        raise DocumentInvalid(
            "unsupported-schema",
            f"schema {schema!r} is not accepted here (accepted: {', '.join(kinds)})",
            "/schema",
        )
    try:
        value = kind.read(document)
    except _READER_ERRORS as error:
        raise _malformed(kind, document, error) from None
    try:
        canonical = kind.write(value)
    except _READER_ERRORS as error:
        raise DocumentInvalid("invalid-document", _reason(error)) from None
    dropped: list[str] = []
    kept = _reconcile(document, canonical, [], dropped)
    return Checked(document=kept, dropped=tuple(dropped), value=value)


# What a reader raises on a malformed document: it indexes nested values, so a list where an
# object belongs, a missing key or text where a number belongs fail inside it.
_READER_ERRORS = (ResultFormatError, AttributeError, TypeError, ValueError, KeyError, IndexError)


def _malformed(kind: DocumentKind, document: dict[str, Any], error: Exception) -> DocumentInvalid:
    """The reader's failure, placed where the codec says it failed (`where`, see codec)."""
    where: tuple[str | int, ...] = getattr(error, "where", ())
    if where:
        parent, last = _at(document, where[:-1]), where[-1]
        if (isinstance(parent, dict) and last not in parent) or (
            isinstance(parent, list) and isinstance(last, int) and last >= len(parent)
        ):
            return DocumentInvalid(
                "invalid-document", "is missing (a malformed document)", pointer(where)
            )
    return DocumentInvalid("invalid-document", _reason(error), pointer(where))


def _at(document: Any, where: tuple[str | int, ...]) -> Any:
    for part in where:
        document = document[part]
    return document


def _reason(error: Exception) -> str:
    if isinstance(error.__cause__, WrongType):  # read by the codec, which words it
        return str(error.__cause__)
    if isinstance(error, ResultFormatError):
        return str(error)
    return f"the document is malformed here ({type(error).__name__}: {error})"


def _reconcile(given: Any, known: Any, path: list[str | int], dropped: list[str]) -> Any:
    """`given` without the keys `known` (the writer's document) lacks; a scalar of another
    JSON type than the writer's (a reader that converted "12" to 12) is refused."""
    if isinstance(given, dict):
        if not isinstance(known, dict):
            return given
        kept = {}
        for name, item in given.items():
            if name not in known:
                dropped.append(pointer([*path, name]))
                continue
            path.append(name)
            kept[name] = _reconcile(item, known[name], path, dropped)
            path.pop()
        return kept
    if isinstance(given, list):
        if not isinstance(known, list):
            return given
        result = []
        for index, item in enumerate(given):
            if index < len(known):
                path.append(index)
                item = _reconcile(item, known[index], path, dropped)
                path.pop()
            result.append(item)
        return result
    if given is not None and known is not None and not _same_type(given, known):
        _fail(path, f"must be {_json_type(known)}, not {shown(given)}")
    return given


def _same_type(given: Any, known: Any) -> bool:
    if isinstance(known, bool) or isinstance(given, bool):
        return type(given) is type(known)
    if isinstance(known, int):  # a whole number: 3.0 is one, 3.5 is not
        return isinstance(given, int) or (isinstance(given, float) and given.is_integer())
    if isinstance(known, float):
        return isinstance(given, int | float)
    return type(given) is type(known)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int):
        return "a whole number"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "null"
