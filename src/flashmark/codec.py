"""One codec for every document: frozen dataclasses <-> JSON-ready values, and JSON text.

`encode` writes a dataclass as an object of its fields in their order, through one cattrs
Converter whose hooks are made from the type hints; `decode` reads it back through readers made
once per class from the same hints, which check every value's type as they read it (cattrs 22.2,
Debian 12's, can neither flatten a dataclass, key a tuple by a field, nor place a failure at its
key and index, and its readers convert "12" to 12 where ours refuse it). A field's metadata
(`document(...)`) says where the document is not plain field names, and a property marked
`written` is written and never read back. Reading, every key is required (but an `omit_none`
or `empty_as_null` one); unknown keys are ignored; a malformed document raises KeyError,
TypeError (WrongType: a value of the wrong type) or ValueError whose `where` names the keys and
indexes down to the value that failed, which `Codec.read` turns into ResultFormatError (keeping
`where`). docs/design.md, "Documents".
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import math
import operator
import re
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, Union

from flashmark.errors import ResultFormatError

if TYPE_CHECKING:
    import cattrs

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
_META = "flashmark.codec"
_NONE = type(None)


@dataclass(frozen=True)
class _Shape:
    key: str | None = None
    digits: int | None = None
    omit_none: bool = False
    empty_as_null: bool = False
    flatten: bool = False
    keyed_by: str | None = None
    saved: bool = True
    hex_digits: int | None = None


_PLAIN = _Shape()


def document(**shape: Any) -> Mapping[str, Any]:
    """A field's place in its document, as `dataclasses.field(metadata=...)`: `key` (when not
    the field's name), `digits` (rounding), `omit_none`, `empty_as_null`, `flatten` (a nested
    dataclass's keys in this object), `keyed_by` (a tuple written as an object under this field
    of each item), `saved` (False: not in the document), `hex_digits` (a number as hex text)."""
    return {_META: _Shape(**shape)}


@dataclass(frozen=True)
class _Written:
    key: str | None = None
    before: str | None = None
    digits: int | None = None
    read: Callable[[Any, Mapping[str, Any]], Mapping[str, Any]] | None = None


def written(**mark: Any) -> Callable[[F], F]:
    """Marks a property (put `@property` above it) as a key of its class's document: written
    from the object, before the key `before` (else last), under `key` (else its name), rounded
    to `digits`. Not read back, unless `read` is given: then the key is read as the property's
    type and `read(value, the object's document)` returns the fields it stands for."""

    def mark_property(function: F) -> F:
        function.__dict__[_META] = _Written(**mark)
        return function

    return mark_property


# -- what a class's document holds -------------------------------------------------------------


@dataclass(frozen=True)
class DocumentField:
    """One key of a class's document: the attribute it is written from (`name`), its key
    (None: a flattened dataclass, its keys in this object), its type, and how it is shaped."""

    name: str
    key: str | None
    hint: Any
    shape: _Shape
    written: _Written | None = None  # a `written` property


@functools.cache
def _hints(kind: Any) -> dict[str, Any]:
    # Resolving the hints is most of the time of reading a document back (the results
    # service reads one per upload); the classes never change, so once per class is enough.
    return typing.get_type_hints(kind)


@functools.cache
def document_fields(kind: type) -> tuple[DocumentField, ...]:
    """The keys of `kind`'s document in their order (fields, then `written` properties put
    before their keys)."""
    hints = _hints(kind)
    fields = [
        DocumentField(
            field.name,
            None if shape.flatten else (shape.key or field.name),
            hints[field.name],
            shape,
        )
        for field in dataclasses.fields(kind)
        if (shape := field.metadata.get(_META, _PLAIN)).saved
    ]
    for name, attribute in _class_attributes(kind):
        mark = getattr(getattr(attribute, "fget", None), "__dict__", {}).get(_META)
        if not isinstance(attribute, property) or not isinstance(mark, _Written):
            continue
        assert attribute.fget is not None
        hint = _hints(attribute.fget).get("return", Any)
        entry = DocumentField(name, mark.key or name, hint, _Shape(digits=mark.digits), mark)
        keys = [field.key for field in fields]
        fields.insert(keys.index(mark.before) if mark.before else len(fields), entry)
    return tuple(fields)


def _class_attributes(kind: type) -> Iterator[tuple[str, Any]]:
    for klass in reversed(kind.__mro__):
        yield from vars(klass).items()


def _options(hint: Any) -> list[Any]:
    return [arg for arg in typing.get_args(hint) if arg is not _NONE]


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (Union, types.UnionType)


def _is_enum(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, enum.Enum)


def _is_dataclass(hint: Any) -> bool:
    return isinstance(hint, type) and dataclasses.is_dataclass(hint)


# -- the converter ------------------------------------------------------------------------------
# One cattrs Converter writes every document. Its hooks are made once per type from
# the type hints and the fields' metadata (`document(...)`, `written`): numbers, text, true and
# false pass through as they are (the strict check refuses a wrong type, never converts it).

Encoder = Callable[[Any], Any]
# What reading a malformed document raises (and a `written` reader or a class's own check).
_MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError)
Decoder = Callable[[Any], Any]
_REQUIRED = object()
_SCALARS = (int, float, str, bool, _NONE)


def _is_tuple(hint: Any) -> bool:
    return hint is tuple or typing.get_origin(hint) is tuple


def _is_mapping(hint: Any) -> bool:
    return hint is dict or typing.get_origin(hint) in (dict, Mapping, typing.Mapping)


@functools.cache
def _converter() -> cattrs.Converter:
    # Made (and cattrs imported, with attrs: about 16 ms) on the first document written, not
    # by every command that imports a kind's schema or only reads documents (`show`).
    import cattrs

    made = cattrs.Converter()
    made.register_unstructure_hook_factory(_is_dataclass, lambda kind: _class_encoder(kind))
    made.register_unstructure_hook_factory(_is_tuple, _tuple_encoder)
    made.register_unstructure_hook_factory(_is_mapping, lambda hint: dict)
    return made


def _enum_value(value: enum.Enum) -> Any:
    return value.value


def _plain(hint: Any) -> bool:
    """Written as it is: a number, text, true or false (or None)."""
    if _is_union(hint):
        return all(_plain(option) for option in typing.get_args(hint))
    return hint in _SCALARS or hint is Any


def _hook(hint: Any) -> Encoder:
    """How a value of `hint` is written, from the converter (a union: by the value's class)."""
    if _plain(hint):
        return _same
    if _is_enum(hint):
        return _enum_value
    if _is_union(hint):
        return encode
    return functools.partial(_converter().unstructure, unstructure_as=hint)


def _same(value: Any) -> Any:
    return value


def _tuple_encoder(hint: Any) -> Encoder:
    arguments = typing.get_args(hint)
    if not arguments or (len(arguments) == 2 and arguments[1] is Ellipsis):
        item = _hook(arguments[0]) if arguments else _converter().unstructure
        if item is _same:
            return list
        return lambda value: [item(element) for element in value]
    items = [_hook(argument) for argument in arguments]
    return lambda value: [item(element) for item, element in zip(items, value, strict=True)]


def encode(value: Any) -> Any:
    """A dataclass (or a tuple of them, an enum, a number or text) as JSON-ready values."""
    # An enum by hand: cattrs dispatches a str-based enum (StrEnum) as the text it is.
    if isinstance(value, enum.Enum):
        return value.value
    return _converter().unstructure(value)


def _field_encoder(entry: DocumentField) -> Encoder:
    shape = entry.shape
    if shape.hex_digits is not None:
        spec = f"0{shape.hex_digits}x"
        return lambda value: format(value, spec)
    if shape.keyed_by is not None:
        return _keyed_encoder(typing.get_args(entry.hint)[0], shape.keyed_by)
    hint = entry.hint
    if _is_union(hint) and len(_options(hint)) == 1:
        hint = _options(hint)[0]
    written = _hook(hint)
    if shape.digits is not None:
        digits, inner = shape.digits, written
        written = lambda value: inner(round(value, digits))  # noqa: E731
    if shape.empty_as_null:
        plain = written
        written = lambda value: plain(value) or None  # noqa: E731
    return written


@functools.cache
def _class_encoder(kind: type, schema: str | None = None) -> Callable[[Any], dict[str, Any]]:
    """A function writing `kind` (with "schema" first, when given): one step a key, in order."""
    steps: list[tuple[str | None, Callable[[Any], Any], Encoder, bool]] = []
    for entry in document_fields(kind):
        get: Callable[[Any], Any] = operator.attrgetter(entry.name)
        if entry.written is not None:
            get = getattr(kind, entry.name).fget
        if entry.shape.flatten:
            steps.append((None, get, _class_encoder(entry.hint), False))
        else:
            steps.append((entry.key, get, _field_encoder(entry), entry.shape.omit_none))

    def encode_object(value: Any) -> dict[str, Any]:
        out: dict[str, Any] = {} if schema is None else {"schema": schema}
        for key, get, write, omit_none in steps:
            got = get(value)
            if key is None:
                out.update(write(got))
            elif got is not None:
                out[key] = write(got)
            elif not omit_none:
                out[key] = None
        return out

    return encode_object


def _keyed_encoder(item: type, keyed_by: str) -> Encoder:
    encode_item = _class_encoder(item)
    key = next(entry.key for entry in document_fields(item) if entry.name == keyed_by)
    assert key is not None

    def encode_keyed(value: Any) -> dict[str, Any]:
        out = {}
        for element in value:
            written = encode_item(element)
            out[written.pop(key)] = written
        return out

    return encode_keyed


# -- reading -----------------------------------------------------------------------------------


def decode(kind: Any, value: Any) -> Any:
    """`value` read as `kind` (a dataclass, a tuple of them, ...); see the module's docstring
    for what it raises."""
    return (_type_decoder(kind) or _same)(value)


def _words(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", " ", name).lower()


@functools.cache
def _type_decoder(hint: Any, label: str = "value", keyed_by: str | None = None) -> Decoder | None:
    """How a value of `hint` is read; None: as it is (numbers, text, true and false)."""
    if _is_union(hint):
        return _union_decoder(hint, label, keyed_by)
    if _is_tuple(hint):
        return _tuple_decoder(hint, label, keyed_by)
    if _is_mapping(hint):
        value_decoder = _type_decoder(typing.get_args(hint)[1], label) or _same

        def decode_mapping(value: Any) -> dict[str, Any]:
            _must_be("an object", value, label)
            return {name: _at(name, value_decoder, value[name]) for name in value}

        return decode_mapping
    if _is_enum(hint):
        return _enum_decoder(hint, label)
    if _is_dataclass(hint):
        return _class_decoder(hint)
    return _SCALAR_READERS.get(hint)


def _union_decoder(hint: Any, label: str, keyed_by: str | None) -> Decoder | None:
    """The first option that reads the value; else the first option's failure."""
    nullable = _NONE in typing.get_args(hint)
    decoders = [_type_decoder(option, label, keyed_by) for option in _options(hint)]
    if None in decoders:
        return None
    if len(decoders) == 1 and nullable:
        only = decoders[0]
        assert only is not None
        return lambda value: None if value is None else only(value)

    def decode_union(value: Any) -> Any:
        if value is None and nullable:
            return None
        first: Exception | None = None
        for decoder in decoders:
            assert decoder is not None
            try:
                return decoder(value)
            except _MALFORMED as error:
                first = first or error
        assert first is not None
        raise first

    return decode_union


@functools.cache
def _enum_decoder(kind: type[enum.Enum], label: str) -> Decoder:
    members = {member.value: member for member in kind}
    known = ", ".join(str(value) for value in members)

    def decode_enum(value: Any) -> enum.Enum:
        try:
            return members[value]
        except (KeyError, TypeError):
            raise ValueError(f"unknown {label} {value!r} (known: {known})") from None

    return decode_enum


def _must_be(what: str, value: Any, label: str) -> None:
    """TypeError unless `value` is `what`: "an object" (a dict) or "a list" (or a tuple)."""
    if not isinstance(value, dict if what == "an object" else list | tuple):
        raise TypeError(f"{label} must be {what}, not {type(value).__name__!r}")


def _tuple_decoder(hint: Any, label: str, keyed_by: str | None) -> Decoder:
    arguments = typing.get_args(hint)
    if keyed_by is not None:
        item = _class_decoder(arguments[0], keyed_by)

        def decode_keyed(value: Any) -> tuple[Any, ...]:
            _must_be("an object", value, label)
            return tuple(
                _at(name, functools.partial(item, given={keyed_by: name}), element)
                for name, element in value.items()
            )

        return decode_keyed
    variadic = len(arguments) == 2 and arguments[1] is Ellipsis
    elements = [_type_decoder(argument, label) for argument in arguments[: 1 if variadic else None]]

    def decode_tuple(value: Any) -> tuple[Any, ...]:
        _must_be("a list", value, label)
        if not variadic and len(value) != len(elements):
            raise ValueError(f"{label} must hold {len(elements)} values, not {len(value)}")
        if variadic and elements[0] is None:
            return tuple(value)
        if variadic and elements[0] is _read_float and _all_numbers(value):
            return tuple(value)  # series of samples: tens of thousands of numbers
        return _each(elements * len(value) if variadic else elements, value)

    return decode_tuple


def _each(readers: list[Decoder | None], items: Any) -> tuple[Any, ...]:
    """Each item read by the reader at its place; a failure placed at its index. The items
    are read again one by one only to find the failing one: series of samples hold tens of
    thousands."""
    try:
        return tuple([(read or _same)(item) for read, item in zip(readers, items, strict=True)])
    except _MALFORMED:
        for index, (read, item) in enumerate(zip(readers, items, strict=True)):
            _at(index, read or _same, item)
        raise


def _at(step: str | int, read: Decoder, value: Any) -> Any:
    """`read(value)`, a failure placed under `step`."""
    try:
        return read(value)
    except _MALFORMED as error:
        _place(error, step)
        raise


def _place(error: Exception, step: str | int) -> None:
    """Puts `step` in front of `error`'s place in the document (`error.where`: the keys and
    indexes from the document's top to the value that failed)."""
    error.where = (step, *getattr(error, "where", ()))  # type: ignore[attr-defined]


def _absent(shape: _Shape) -> Any:
    """What an absent key reads as (None, or an empty tuple), or _REQUIRED."""
    if shape.omit_none:
        return None
    return () if shape.empty_as_null else _REQUIRED


def _field_decoder(kind: type, entry: DocumentField) -> Decoder:
    shape = entry.shape
    decoder: Decoder | None
    if shape.hex_digits is not None:
        decoder = _hex
    else:
        label = f"{_words(kind.__name__)} {entry.name}"
        decoder = _type_decoder(entry.hint, label, shape.keyed_by)
    if shape.empty_as_null:
        inner = decoder
        return lambda value: () if value is None else (value if inner is None else inner(value))
    if shape.omit_none and decoder is not None:  # null reads as the absent key does
        given = decoder
        return lambda value: None if value is None else given(value)
    return _same if decoder is None else decoder


def _hex(value: Any) -> int:
    return _read_int(int(str(value), 16))


@functools.cache
def _class_decoder(kind: type, skip: str | None = None) -> Callable[..., Any]:
    """A function reading `kind`, each key looked up in the order of the document; with
    `skip`, that field is given (the key of an item of an object keyed by it)."""
    # (argument name or None for a `written` reader's fields, key or None: flattened, reader,
    # what an absent key reads as, a `written` property's reader)
    steps: list[tuple[str, str | None, Decoder, Any, Any]] = []
    for entry in document_fields(kind):
        if entry.name == skip or (entry.written is not None and entry.written.read is None):
            continue
        if entry.key is None:
            steps.append((entry.name, None, _class_decoder(entry.hint), None, None))
            continue
        absent = _absent(entry.shape)
        read = entry.written.read if entry.written is not None else None
        steps.append((entry.name, entry.key, _field_decoder(kind, entry), absent, read))
    what = _words(kind.__name__)

    def decode_object(value: Any, given: Mapping[str, Any] | None = None) -> Any:
        _must_be("an object", value, what)
        arguments: dict[str, Any] = dict(given) if given else {}
        for name, key, decoder, absent, read in steps:
            if key is None:
                arguments[name] = decoder(value)
                continue
            try:
                got = decoder(value[key]) if absent is _REQUIRED or key in value else absent
                if read is not None:
                    arguments.update(read(got, value))
                else:
                    arguments[name] = got
            except _MALFORMED as error:
                _place(error, key)
                raise
        return kind(**arguments)

    return decode_object


# Whole numbers must fit the 64-bit integers of SQLite and PostgreSQL (BIGINT).
MAX_INT = 2**63 - 1
MAX_UNSIGNED = 2**64 - 1
# No figure of a storage benchmark comes near 10^18 (B/s, ns, IOPS or bytes as a float); the
# charts scale figures and would turn larger ones into infinities. 1e400 reads as infinity.
MAX_FLOAT = 1e18
# What a document's true-or-false, whole number and number hold, in the words of a refusal.
SCALAR_WORDS = {
    bool: "true or false",
    int: "a whole number within 64 bits",
    float: f"a number within ±{MAX_FLOAT:g}",
}

# -- the types of values ----------------------------------------------------------------------
# Reading checks what every value holds against its type hint and never converts it: whole
# numbers within 64 bits, numbers finite and within ±MAX_FLOAT, text where text belongs.


class WrongType(TypeError):
    """A value that its type hint refuses; `where` (see `_place`) says where it is."""

    def __init__(self, expected: str, value: Any) -> None:
        super().__init__(f"must be {expected}, not {shown(value)}")
        self.expected = expected
        self.value = value


def shown(value: Any) -> str:
    """A value as JSON text, cut to 60 characters."""
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def fits(kind: type, value: Any) -> bool:
    """Whether `value` is what a JSON document holds of `kind` (bool, int or float): true or
    false, a whole number within ±MAX_INT (as strict intake takes them), a number within
    ±MAX_FLOAT (NaN fails every comparison)."""
    if kind is float:
        return type(value) in (int, float) and -MAX_FLOAT <= value <= MAX_FLOAT
    if kind is int:
        return type(value) is int and -MAX_INT <= value <= MAX_INT
    return type(value) is bool


def _read_bool(value: Any) -> bool:
    if type(value) is not bool:
        raise WrongType(SCALAR_WORDS[bool], value)
    return value


def _read_int(value: Any) -> int:
    # Signed or unsigned: a surface scan's nonce is an unsigned 64-bit number, written as hex
    # text; numbers written as JSON numbers are held to MAX_INT by strict intake already.
    if type(value) is not int or not -MAX_INT - 1 <= value <= MAX_UNSIGNED:
        raise WrongType(SCALAR_WORDS[int], value)
    return value


def _read_float(value: Any) -> float:
    if fits(float, value):
        return value  # type: ignore[no-any-return]  # an int or a float
    raise WrongType(SCALAR_WORDS[float] if type(value) in (int, float) else "a number", value)


def _read_str(value: Any) -> str:
    if type(value) is not str:
        raise WrongType("text", value)
    return value


def _all_numbers(values: Any) -> bool:
    """Every item a number within ±MAX_FLOAT, found in a few passes of C rather than a
    call per item (a series of samples holds tens of thousands)."""
    return (
        {float, int}.issuperset(map(type, values))
        and math.isfinite(sum(values))  # NaN or an infinity anywhere (no sum of bounded ones is)
        and (not values or (min(values) >= -MAX_FLOAT and max(values) <= MAX_FLOAT))
    )


_SCALAR_READERS: dict[Any, Decoder] = {
    bool: _read_bool,
    int: _read_int,
    float: _read_float,
    str: _read_str,
}


# -- a kind's document -------------------------------------------------------------------------


@dataclass(frozen=True)
class Codec(Generic[T]):
    """A kind's document: `kind` written and read whole under "schema" `schema` (its first
    key); `what` names it in errors, `check` refuses a value its types cannot (a verdict
    outside its list)."""

    kind: type[T]
    schema: str
    what: str
    check: Callable[[T], None] | None = None

    def write(self, value: T) -> dict[str, Any]:
        kind: Any = self.kind
        return _class_encoder(kind, self.schema)(value)

    def read(self, document: Mapping[str, Any]) -> T:
        """The value a document holds; ResultFormatError for another schema or a malformed
        document, naming what is wrong."""
        schema = self.schema
        if document.get("schema") != schema:
            raise ResultFormatError(
                f"not a {schema} document (schema is {document.get('schema')!r})"
            )
        try:
            kind: Any = self.kind
            value: T = _class_decoder(kind)(
                document if isinstance(document, dict) else dict(document)
            )
            if self.check is not None:
                self.check(value)
        except _MALFORMED as error:
            malformed = ResultFormatError(
                f"{self.what} document is malformed ({type(error).__name__}: {error})"
            )
            malformed.where = getattr(error, "where", ())  # type: ignore[attr-defined]
            raise malformed from error  # a WrongType: strict intake words it itself
        return value


# -- text --------------------------------------------------------------------------------------


def to_text(document: Any) -> str:
    """A document (or a list of them) as people and tools read it."""
    return json.dumps(document, indent=2) + "\n"


def compact(document: Any) -> str:
    """A document on one line, as the history stores it."""
    return json.dumps(document)
