"""One codec for every document: frozen dataclasses <-> JSON-ready values, and JSON text.

`encode` writes a dataclass as an object of its fields in their order and `decode` reads it
back, driven by the type hints; a field's metadata (`document(...)`) says where the document is
not plain field names, and a property marked `written` is written and never read back. Reading,
every key is required but those a kind's `Defaults` name; unknown keys are ignored; a malformed
document raises KeyError, TypeError or ValueError right after the wrong look-up (kinds.strict
places it), which `Codec.read` turns into ResultFormatError. docs/design.md, "Documents".
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import re
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, Union

from flashmark.errors import ResultFormatError

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


def document(
    *,
    key: str | None = None,
    digits: int | None = None,
    omit_none: bool = False,
    empty_as_null: bool = False,
    flatten: bool = False,
    keyed_by: str | None = None,
    saved: bool = True,
    hex_digits: int | None = None,
) -> Mapping[str, Any]:
    """A field's place in its document, as `dataclasses.field(metadata=...)`: `key` (when not
    the field's name), `digits` (rounding), `omit_none`, `empty_as_null`, `flatten` (a nested
    dataclass's keys in this object), `keyed_by` (a tuple written as an object under this field
    of each item), `saved` (False: not in the document), `hex_digits` (a number as hex text)."""
    return {
        _META: _Shape(key, digits, omit_none, empty_as_null, flatten, keyed_by, saved, hex_digits)
    }


@dataclass(frozen=True)
class _Written:
    key: str | None
    before: str | None
    digits: int | None
    read: Callable[[Any, Mapping[str, Any]], Mapping[str, Any]] | None


def written(
    *,
    before: str | None = None,
    digits: int | None = None,
    key: str | None = None,
    read: Callable[[Any, Mapping[str, Any]], Mapping[str, Any]] | None = None,
) -> Callable[[F], F]:
    """Marks a property (put `@property` above it) as a key of its class's document: written
    from the object, before the key `before` (else last), under `key` (else its name). Not
    read back, unless `read` is given: then the key is read as the property's type and
    `read(value, the object's document)` returns the fields it stands for."""

    def mark(function: F) -> F:
        function.__dict__[_META] = _Written(key, before, digits, read)
        return function

    return mark


@dataclass(frozen=True)
class EveryKey:
    """Every key of a class that a document lacks reads as `value`."""

    value: Any


class Defaults:
    """What documents lack and read as, by class and key: a value, or a function of the
    object being read (its other keys). One table a kind, beside its document, saying since
    when; a kind whose documents hold another kind's parts joins their tables with `|`."""

    def __init__(self, table: Mapping[type, Mapping[str, Any] | EveryKey] | None = None) -> None:
        self._table: dict[type, Mapping[str, Any] | EveryKey] = dict(table or {})

    def __or__(self, other: Defaults) -> Defaults:
        return Defaults({**self._table, **other._table})

    def of(self, kind: type) -> Mapping[str, Any] | EveryKey:
        return self._table.get(kind, {})


NO_DEFAULTS = Defaults()


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


# -- writing -----------------------------------------------------------------------------------


def encode(value: Any) -> Any:
    """A dataclass (or a tuple of them, an enum, a number or text) as JSON-ready values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _class_encoder(type(value))(value)
    if isinstance(value, tuple | list):
        return [encode(item) for item in value]
    if isinstance(value, enum.Enum):
        return value.value
    return value


Encoder = Callable[[Any], Any]


@functools.cache
def _class_encoder(kind: type, schema: str | None = None) -> Callable[[Any], dict[str, Any]]:
    """A function writing `kind` (with "schema" first, when given), made once as Python
    source (a dict display of its keys in order): a generic loop over the fields costs several
    times as much per object, and documents hold tens of thousands of them (per-second
    samples)."""
    namespace: dict[str, Any] = {}
    # the dict display, up to the first key left out when None
    items: list[str] = [] if schema is None else [f"'schema': {schema!r}"]
    statements: list[str] = []  # then one statement a key
    for index, entry in enumerate(document_fields(kind)):
        shape = entry.shape
        got = f"value.{entry.name}"
        if entry.written is not None:
            namespace[f"_g{index}"] = getattr(kind, entry.name).fget
            got = f"_g{index}(value)"
        if shape.flatten:
            namespace[f"_e{index}"] = _class_encoder(entry.hint)
            if statements:
                statements.append(f"out.update(_e{index}({got}))")
            else:
                items.append(f"**_e{index}({got})")
            continue
        encoder = _type_encoder(entry.hint, shape.keyed_by)
        if shape.hex_digits is not None:
            encoder = functools.partial(_hex_text, spec=f"0{shape.hex_digits}x")
        written = "_v"
        if shape.digits is not None:
            written = f"round({written}, {shape.digits})"
        if _is_enum(_options(entry.hint)[0] if _is_union(entry.hint) else entry.hint):
            written = f"{written}.value"
        elif encoder is not None:
            namespace[f"_e{index}"] = encoder
            written = f"_e{index}({written})"
        if shape.empty_as_null:
            written = f"({written} or None)"
        key = repr(entry.key)
        if shape.omit_none:
            statements.append(f"_v = {got}\n    if _v is not None:\n        out[{key}] = {written}")
            continue
        value = got if written == "_v" else f"(None if (_v := {got}) is None else {written})"
        if statements:
            statements.append(f"out[{key}] = {value}")
        else:
            items.append(f"{key}: {value}")
    body = "\n    ".join([f"out = {{{', '.join(items)}}}", *statements, "return out"])
    return typing.cast(
        Callable[[Any], dict[str, Any]],
        _compiled(f"def encode_object(value):\n    {body}\n", namespace, "encode_object"),
    )


def _compiled(source: str, namespace: dict[str, Any], name: str) -> Any:
    # As dataclasses makes __init__: the source holds field names (identifiers) and keys
    # (repr'd literals) of flashmark's own classes, never a document's text.
    exec(compile(source, f"<flashmark.codec {name}>", "exec"), namespace)
    return namespace[name]


@functools.cache
def _type_encoder(hint: Any, keyed_by: str | None = None) -> Encoder | None:
    """How a value of `hint` is written; None: as it is."""
    if _is_union(hint):
        options = [_type_encoder(option) for option in _options(hint)]
        if all(option is None for option in options):
            return None
        if len(options) == 1:
            only = options[0]
            assert only is not None
            return lambda value: None if value is None else only(value)
        return encode
    origin = typing.get_origin(hint)
    if origin is tuple:
        arguments = typing.get_args(hint)
        if keyed_by is not None:
            return _keyed_encoder(arguments[0], keyed_by)
        if len(arguments) == 2 and arguments[1] is Ellipsis:
            item = _type_encoder(arguments[0])
            if item is None:
                return list
            return lambda value: [item(element) for element in value]
        items = [_type_encoder(argument) for argument in arguments]
        if all(item is None for item in items):
            return list
        return lambda value: [
            element if item is None else item(element)
            for item, element in zip(items, value, strict=True)
        ]
    if origin in (dict, Mapping, typing.Mapping):
        return dict
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return lambda value: value.value
    if _is_dataclass(hint):
        return _class_encoder(hint)
    return None


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


def decode(kind: Any, value: Any, defaults: Defaults = NO_DEFAULTS) -> Any:
    """`value` read as `kind` (a dataclass, a tuple of them, ...), with the `defaults` of what
    documents may lack; see the module's docstring for what it raises."""
    decoder = _type_decoder(kind, defaults)
    return value if decoder is None else decoder(value)


Decoder = Callable[[Any], Any]
_REQUIRED = object()


def _words(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", " ", name).lower()


def _type_name(value: Any) -> str:
    return repr(type(value).__name__)


@functools.cache
def _type_decoder(
    hint: Any, defaults: Defaults, label: str = "value", keyed_by: str | None = None
) -> Decoder | None:
    """How a value of `hint` is read; None: as it is (numbers, text, true and false)."""
    if _is_union(hint):
        options = _options(hint)
        decoder = _type_decoder(options[0], defaults, label, keyed_by)
        if decoder is None or len(options) > 1:
            return decoder
        if _NONE not in typing.get_args(hint):
            return decoder
        return lambda value: None if value is None else decoder(value)
    origin = typing.get_origin(hint)
    if origin is tuple:
        return _tuple_decoder(hint, defaults, label, keyed_by)
    if origin in (dict, Mapping, typing.Mapping):
        value_decoder = _type_decoder(typing.get_args(hint)[1], defaults, label)

        def decode_mapping(value: Any) -> dict[str, Any]:
            if not isinstance(value, dict):
                raise TypeError(f"{label} must be an object, not {_type_name(value)}")
            if value_decoder is None:
                return dict(value)
            return {name: value_decoder(value[name]) for name in value}

        return decode_mapping
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _enum_decoder(hint, label)
    if _is_dataclass(hint):
        return _class_decoder(hint, defaults)
    return None


def _enum_decoder(kind: type[enum.Enum], label: str) -> Decoder:
    members = {member.value: member for member in kind}
    known = ", ".join(str(value) for value in members)

    def decode_enum(value: Any) -> enum.Enum:
        try:
            return members[value]
        except (KeyError, TypeError):
            raise ValueError(f"unknown {label} {value!r} (known: {known})") from None

    return decode_enum


def _tuple_decoder(
    hint: Any, defaults: Defaults, label: str, keyed_by: str | None
) -> Decoder | None:
    arguments = typing.get_args(hint)
    if keyed_by is not None:
        item = _class_decoder(arguments[0], defaults, keyed_by)

        def decode_keyed(value: Any) -> tuple[Any, ...]:
            if not isinstance(value, dict):
                raise TypeError(f"{label} must be an object, not {_type_name(value)}")
            # Looked up by key, not by items(): a traced document notes each one.
            return tuple(item(value[name], {keyed_by: name}) for name in value)

        return decode_keyed
    if len(arguments) == 2 and arguments[1] is Ellipsis:
        element = _type_decoder(arguments[0], defaults, label)

        def decode_tuple(value: Any) -> tuple[Any, ...]:
            if not isinstance(value, list | tuple):
                raise TypeError(f"{label} must be a list, not {_type_name(value)}")
            if element is None:
                return tuple(value)
            return tuple([element(item) for item in value])

        return decode_tuple
    elements = [_type_decoder(argument, defaults, label) for argument in arguments]

    def decode_fixed(value: Any) -> tuple[Any, ...]:
        if not isinstance(value, list | tuple):
            raise TypeError(f"{label} must be a list, not {_type_name(value)}")
        if len(value) != len(elements):
            raise ValueError(f"{label} must hold {len(elements)} values, not {len(value)}")
        return tuple(
            item if decoder is None else decoder(item)
            for decoder, item in zip(elements, value, strict=True)
        )

    return decode_fixed


def _hex_text(value: int, spec: str) -> str:
    return format(value, spec)


def _hex(value: Any) -> int:
    return int(str(value), 16)


def _absent(
    key: str, table: Mapping[str, Any] | EveryKey, shape: _Shape
) -> Callable[[Mapping[str, Any]], Any] | object:
    """What an absent key reads as: a function of the object, or _REQUIRED."""
    if isinstance(table, EveryKey):
        every = table.value
        return lambda document: every
    if key in table:
        default = table[key]
        if callable(default) and not isinstance(default, enum.Enum):
            return typing.cast(Callable[[Mapping[str, Any]], Any], default)
        return lambda document: default
    if shape.omit_none or shape.empty_as_null:
        empty: Any = None if shape.omit_none else ()
        return lambda document: empty
    return _REQUIRED


@functools.cache
def _class_decoder(kind: type, defaults: Defaults, skip: str | None = None) -> Callable[..., Any]:
    """A function reading `kind`, made once as Python source (one call of the class, each
    argument looked up in the order of the document); with `skip`, that field is given
    (the key of an item of an object keyed by it)."""
    table = defaults.of(kind)
    namespace: dict[str, Any] = {"_kind": kind, "_not_an_object": _not_an_object(kind)}
    arguments = ["**given"] if skip is not None else []
    for index, entry in enumerate(document_fields(kind)):
        if entry.name == skip or (entry.written is not None and entry.written.read is None):
            continue
        shape = entry.shape
        if entry.key is None:
            namespace[f"_d{index}"] = _class_decoder(entry.hint, defaults)
            arguments.append(f"{entry.name}=_d{index}(value)")
            continue
        label = f"{_words(kind.__name__)} {entry.name}"
        decoder = _type_decoder(entry.hint, defaults, label, shape.keyed_by)
        if shape.hex_digits is not None:
            decoder = _hex
        if shape.empty_as_null:
            decoder = _null_as_empty(decoder)
        key = repr(entry.key)
        value = f"value[{key}]"
        if decoder is not None:
            namespace[f"_d{index}"] = decoder
            value = f"_d{index}({value})"
        absent = _absent(entry.key, table, shape)
        if absent is not _REQUIRED:
            namespace[f"_a{index}"] = absent
            value = f"({value} if {key} in value else _a{index}(value))"
        if entry.written is not None:
            namespace[f"_r{index}"] = entry.written.read
            arguments.append(f"**_r{index}({value}, value)")
        else:
            arguments.append(f"{entry.name}={value}")
    call = ", ".join(arguments)
    source = (
        "def decode_object(value, given=None):\n"
        "    if not isinstance(value, dict):\n"
        "        raise _not_an_object(value)\n"
        f"    return _kind({call})\n"
    )
    return typing.cast(Callable[..., Any], _compiled(source, namespace, "decode_object"))


def _not_an_object(kind: type) -> Callable[[Any], TypeError]:
    what = _words(kind.__name__)
    return lambda value: TypeError(f"{what} must be an object, not {_type_name(value)}")


def _null_as_empty(decoder: Decoder | None) -> Decoder:
    def decode_empty(value: Any) -> Any:
        if value is None:
            return ()
        return value if decoder is None else decoder(value)

    return decode_empty


# -- a kind's document -------------------------------------------------------------------------

_MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError)


@dataclass(frozen=True)
class Codec(Generic[T]):
    """A kind's document: `kind` written and read whole under "schema" `schema` (its first
    key); `what` names it in errors, `defaults` says what earlier documents lack, `check`
    refuses a value its types cannot (a verdict outside its list)."""

    kind: type[T]
    schema: str
    what: str
    defaults: Defaults = NO_DEFAULTS
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
            # A dict as it is (the strict check reads documents through a dict that notes
            # each key).
            kind: Any = self.kind
            value: T = _class_decoder(kind, self.defaults)(
                document if isinstance(document, dict) else dict(document)
            )
            if self.check is not None:
                self.check(value)
        except _MALFORMED as error:
            raise ResultFormatError(
                f"{self.what} document is malformed ({type(error).__name__}: {error})"
            ) from None
        return value


# -- text --------------------------------------------------------------------------------------


def to_text(document: Any) -> str:
    """A document (or a list of them) as people and tools read it."""
    return json.dumps(document, indent=2) + "\n"


def compact(document: Any) -> str:
    """A document on one line, as the history stores it."""
    return json.dumps(document)
