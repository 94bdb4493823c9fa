"""What `flashmark upload` sends of each field of a document: the rules, kept on the fields.

A class an upload holds is marked `@uploaded`; each of its fields is then sent by its type's
rule (numbers, true and false, enums, lists and objects of them) unless its metadata gives
another (`upload(rule)`), or says it is not sent (`NOT_SENT`). A text has no rule of its type:
every text field says how it is sent. A `written` property is sent only when marked
(`@upload_as`). `Fields(kind)` is the table of a class, in its document's order (codec).

A rule builds the value sent from the value saved, or says it cannot be sent (`NotSent`). The
field chooses what a value that cannot be sent becomes (`.or_null()`, `.or_withheld()`,
`ListOf(..., drop=True)`); otherwise the upload is refused, naming the field. A text other
than flashmark's own words (`OneOf`) is sent only when the screen (server/identifiers.py)
finds nothing in it. Each rule also says in a few words what it sends (`shown`, `rows`: the
table `flashmark upload --fields` prints).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import re
import types
import typing
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from flashmark.codec import SCALAR_WORDS, document_fields, fits

# What a text field holds on the service when its value stays here: a value withheld, not a
# result missing. Uploads of earlier flashmark versions hold WITHHELD_BEFORE instead.
WITHHELD = "(withheld)"
WITHHELD_BEFORE = "(not uploaded)"
# What a page says of it when pointed at (its title attribute).
WITHHELD_TIP = "not shared by uploads: this value stays on the machine that measured"
_KEY = "flashmark.upload"
_UPLOADED = "__flashmark_uploaded__"
# What identifier a text holds ("a path", "a known name"), or None: the screen of an upload.
Screen = Callable[[str], str | None]
F = TypeVar("F", bound=Callable[..., Any])
K = TypeVar("K", bound=type)


class NotSent(Exception):
    """A value its rule does not send; `where` is its place in the document."""

    def __init__(self, where: str, why: str) -> None:
        super().__init__(f"{where}: {why}")
        self.where = where
        self.why = why


class Rule(ABC):
    """How one field is sent."""

    @abstractmethod
    def build(self, value: Any, where: str, screen: Screen) -> Any:
        """The value to send, or NotSent."""

    @abstractmethod
    def shown(self) -> str:
        """What is sent, in a few words, for the table `flashmark upload --fields` prints."""

    def rows(self, where: str) -> Iterator[tuple[str, str]]:
        """Each place this rule sends, with what is sent there (containers: their fields)."""
        yield where, self.shown()

    def or_null(self) -> Rule:
        return _Fallback(self, None)

    def or_withheld(self) -> Rule:
        return _Fallback(self, WITHHELD)

    def nullable(self) -> Rule:
        return _Nullable(self)


@dataclass(frozen=True)
class _Nullable(Rule):
    rule: Rule

    def build(self, value: Any, where: str, screen: Screen) -> Any:
        return None if value is None else self.rule.build(value, where, screen)

    def shown(self) -> str:
        return f"{self.rule.shown()}, or null"

    def rows(self, where: str) -> Iterator[tuple[str, str]]:
        for place, text in self.rule.rows(where):
            yield place, f"{text}, or null" if place == where else text


@dataclass(frozen=True)
class _Fallback(Rule):
    rule: Rule
    instead: Any

    def build(self, value: Any, where: str, screen: Screen) -> Any:
        if value is None:
            return None
        try:
            return self.rule.build(value, where, screen)
        except NotSent:
            return self.instead

    def shown(self) -> str:
        return f"{self.rule.shown()}, else {json.dumps(self.instead)}"

    def rows(self, where: str) -> Iterator[tuple[str, str]]:
        for place, text in self.rule.rows(where):
            yield place, f"{text}, else {json.dumps(self.instead)}" if place == where else text


# -- leaves ------------------------------------------------------------------------------------


class OneOf(Rule):
    """One of flashmark's own words (an enum, a test name, a grade's title): sent as it is.
    A word or a function giving words, called when first needed (words of modules made of the
    classes that name them)."""

    def __init__(self, *choices: str | Callable[[], Iterable[str]]) -> None:
        self._choices = choices

    @functools.cached_property
    def choices(self) -> frozenset[str]:
        return frozenset(
            word
            for choice in self._choices
            for word in ((choice,) if isinstance(choice, str) else choice())
        )

    def build(self, value: Any, where: str, screen: Screen) -> Any:
        if isinstance(value, str) and value in self.choices:
            return value
        raise NotSent(where, "not one of flashmark's own words")

    def shown(self) -> str:
        if len(self.choices) > 4:
            return f"one of flashmark's {len(self.choices)} words"
        return "one of " + ", ".join(json.dumps(choice) for choice in sorted(self.choices))


@dataclass(frozen=True)
class Matching(Rule):
    """A machine-made token of a known shape (a version, a kernel's device name), screened
    unless its shape admits nothing but digits and separators."""

    pattern: str
    max_length: int = 64
    screened: bool = True

    def build(self, value: Any, where: str, screen: Screen) -> Any:
        if not isinstance(value, str) or len(value) > self.max_length:
            raise NotSent(where, "not text of its size")
        if not re.fullmatch(self.pattern, value):
            raise NotSent(where, f"not of the shape {self.pattern}")
        if self.screened:
            _screen(value, where, screen)
        return value

    def shown(self) -> str:
        return f"text of the shape {self.pattern}" + (", screened" if self.screened else "")


@dataclass(frozen=True)
class Text(Rule):
    """Text made by flashmark from figures and its own words, or a model name a device reports:
    sent when no identifier is found in it."""

    max_length: int = 500

    def build(self, value: Any, where: str, screen: Screen) -> Any:
        if not isinstance(value, str) or len(value) > self.max_length:
            raise NotSent(where, "not text of its size")
        _screen(value, where, screen)
        return value

    def shown(self) -> str:
        return f"text of at most {self.max_length} characters, screened"


@dataclass(frozen=True)
class Chosen(Rule):
    """A name the user chose to send with an upload (a campaign, a board label): sent as it is
    when its own check (`problem`: why it cannot be sent, or None) passes. Not screened for
    this machine's names: sending it is the user's choice."""

    problem: Callable[[object], str | None]

    def build(self, value: Any, where: str, screen: Screen) -> Any:
        why = self.problem(value)
        if why is not None:
            raise NotSent(where, why)
        return value

    def shown(self) -> str:
        return "the user's choice, checked"


@dataclass(frozen=True)
class Withheld(Rule):
    """Text that may name a path, a host, a user or a serial number: WITHHELD is sent instead
    (null stays null)."""

    def build(self, value: Any, where: str, screen: Screen) -> Any:
        if value is None:
            return None
        if not isinstance(value, str):
            raise NotSent(where, "not text")
        return WITHHELD

    def shown(self) -> str:
        return f"withheld: {json.dumps(WITHHELD)}"


@dataclass(frozen=True)
class MaskedCid(Withheld):
    """A card's CID register: WITHHELD here, which server/outgoing.py replaces with the
    register with its serial (PSN) and CRC zeroed where that decodes and passes the screen."""

    def shown(self) -> str:
        return f"the CID with its serial (PSN) and CRC zeroed, else {json.dumps(WITHHELD)}"


@dataclass(frozen=True)
class Always(Rule):
    """A fixed value instead of what the document holds (an empty list of messages)."""

    value: Any

    def build(self, value: Any, where: str, screen: Screen) -> Any:
        return list(self.value) if isinstance(self.value, tuple) else self.value

    def shown(self) -> str:
        return f"always {json.dumps(self.value)}"


@dataclass(frozen=True)
class Scalar(Rule):
    """True or false, a whole number (a count, a size in bytes) or a number (a figure, a
    setting): a value of `kind` as a document holds one (codec.fits), in the codec's words."""

    kind: type
    refused: str = ""  # why a value is not sent, if other than "not" and those words

    def build(self, value: Any, where: str, screen: Screen) -> Any:
        if not fits(self.kind, value):
            raise NotSent(where, self.refused or f"not {self.shown()}")
        return value

    def shown(self) -> str:
        return SCALAR_WORDS[self.kind]


@dataclass(frozen=True)
class DeviceNode(Rule):
    """/dev/NAME with a kernel device name (/dev/mmcblk0p2): says which kind of device, not
    which one. /dev/disk/by-id/... (serial numbers), /dev/mapper/... and network sources are not
    of this shape."""

    name: Rule

    def build(self, value: Any, where: str, screen: Screen) -> Any:
        if not isinstance(value, str) or not value.startswith("/dev/"):
            raise NotSent(where, "not a device node")
        return "/dev/" + self.name.build(value.removeprefix("/dev/"), where, screen)

    def shown(self) -> str:
        return f"/dev/ and {self.name.shown()}"


@dataclass(frozen=True)
class MountOptions(Rule):
    """A mount's options, only those named in `names` with a short plain value: the others
    (a network mount's user, address or credentials file) are left out."""

    names: frozenset[str]

    def build(self, value: Any, where: str, screen: Screen) -> Any:
        if not isinstance(value, str):
            raise NotSent(where, "not text")
        kept = []
        for option in value.split(","):
            name, _, setting = option.partition("=")
            if name not in self.names or not re.fullmatch(r"[A-Za-z0-9_.:-]{0,32}", setting):
                continue
            if setting.isdecimal() or screen(setting) is None:
                kept.append(option)
        return ",".join(kept)

    def shown(self) -> str:
        return f"only the {len(self.names)} options that change speed, with short values"


def _screen(text: str, where: str, screen: Screen) -> None:
    found = screen(text)
    if found is not None:
        raise NotSent(where, f"holds {found}")


# -- containers --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fields(Rule):
    """An object of `kind`'s document: only the keys its table holds (`table_of`), in this
    order; a key the document lacks (an older document) stays absent. `skip`: the field an
    object keyed by it holds as its keys; `schema`: a kind's whole document, "schema" first."""

    kind: type
    skip: str | None = None
    schema: str | None = None

    @functools.cached_property
    def fields(self) -> Mapping[str, Rule]:
        table = table_of(self.kind, self.skip)
        return table if self.schema is None else {"schema": OneOf(self.schema), **table}

    def build(self, value: Any, where: str, screen: Screen) -> Any:
        if not isinstance(value, Mapping):
            raise NotSent(where, "not an object")
        return {
            key: rule.build(value[key], f"{where}.{key}", screen)
            for key, rule in self.fields.items()
            if key in value
        }

    def shown(self) -> str:
        return "an object"

    def rows(self, where: str) -> Iterator[tuple[str, str]]:
        for key, rule in self.fields.items():
            yield from rule.rows(f"{where}.{key}")


@dataclass(frozen=True)
class ListOf(Rule):
    """A list; with `drop`, an item that cannot be sent is left out (a remark among others)."""

    item: Rule
    drop: bool = False

    def build(self, value: Any, where: str, screen: Screen) -> Any:
        if not isinstance(value, list):
            raise NotSent(where, "not a list")
        sent = []
        for index, element in enumerate(value):
            try:
                sent.append(self.item.build(element, f"{where}[{index}]", screen))
            except NotSent:
                if not self.drop:
                    raise
        return sent

    def shown(self) -> str:
        return "a list"

    def rows(self, where: str) -> Iterator[tuple[str, str]]:
        for place, text in self.item.rows(f"{where}[]"):
            yield place, f"{text} (an item that is not is left out)" if self.drop else text


@dataclass(frozen=True)
class MapOf(Rule):
    """An object whose keys are data (the grades by name): each key by `keys`, each value by
    `values`."""

    keys: Rule
    values: Rule

    def build(self, value: Any, where: str, screen: Screen) -> Any:
        if not isinstance(value, Mapping):
            raise NotSent(where, "not an object")
        return {
            self.keys.build(key, f"{where} key", screen): self.values.build(
                item, f"{where}.{key}", screen
            )
            for key, item in value.items()
        }

    def shown(self) -> str:
        return "an object"

    def rows(self, where: str) -> Iterator[tuple[str, str]]:
        yield from self.keys.rows(f"{where} key")
        yield from self.values.rows(f"{where}.KEY")


# -- on the fields -------------------------------------------------------------------------------

_BY_TYPE: Any = object()  # a field sent by its type's rule


def uploaded(kind: K) -> K:
    """Marks a dataclass whose fields an upload sends (see the module's docstring)."""
    setattr(kind, _UPLOADED, True)
    return kind


def upload(rule: Rule | None, metadata: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    """A field's rule (None: not sent), as `dataclasses.field(metadata=...)`, with its other
    `metadata` (`document(...)`)."""
    return {**(metadata or {}), _KEY: rule}


NOT_SENT = upload(None)


def upload_as(rule: Rule = _BY_TYPE) -> Callable[[F], F]:
    """Marks a `written` property (put `@property` above it) as sent, by `rule` or its type's."""

    def mark(function: F) -> F:
        function.__dict__[_KEY] = rule
        return function

    return mark


@functools.cache
def table_of(kind: type, skip: str | None = None) -> Mapping[str, Rule]:
    """The keys an upload holds of `kind`'s document, with their rules, in the document's
    order (`skip`: a field left out)."""
    marks = {field.name: field.metadata.get(_KEY, _BY_TYPE) for field in dataclasses.fields(kind)}
    table: dict[str, Rule] = {}
    for entry in document_fields(kind):
        if entry.written is None:
            rule = marks[entry.name]
        else:  # a property: sent only when marked
            rule = getattr(kind, entry.name).fget.__dict__.get(_KEY)
        if rule is None or entry.name == skip:
            continue
        if entry.key is None:  # a flattened class: its keys in this object
            table.update(table_of(entry.hint))
        else:
            by_type = rule is _BY_TYPE
            table[entry.key] = _rule_of(kind, entry.name, entry.hint) if by_type else rule
    return table


def _rule_of(kind: type, name: str, hint: Any) -> Rule:
    """The rule a type gives a field of an `@uploaded` class (a text has none: TypeError)."""
    if not getattr(kind, _UPLOADED, False):
        raise TypeError(f"{kind.__name__}.{name}: its class is not marked @uploaded")
    options = [arg for arg in typing.get_args(hint) if arg is not type(None)]
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return _rule_of(kind, name, options[0]).nullable()
    if typing.get_origin(hint) is tuple:
        return ListOf(_rule_of(kind, name, options[0]))
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return OneOf(*(member.value for member in hint))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return Fields(hint)
    if hint in SCALAR_WORDS:
        return Scalar(hint, "not a finite number" if hint is float else "")
    raise TypeError(f"{kind.__name__}.{name}: a field of {hint} needs its own upload rule")


# -- shapes many documents hold --------------------------------------------------------------------

# Digits and fixed separators only: nothing else fits, so it needs no screening (a host
# called "22" leaves 2026-11-22T01:35:25Z alone).
TIMESTAMP = Matching(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-]\d{2}:\d{2})", screened=False
)
VERSION = Matching(r"\d{1,4}(?:\.\d{1,6}){1,3}(?:[.+-][0-9A-Za-z.+-]{0,32})?")
# A kernel's name for a block device, a thermal zone, a governor: what the kernel calls it.
KERNEL_NAME = Matching(r"[a-z][a-z0-9_-]{0,31}")
DEVICE_NODE = DeviceNode(KERNEL_NAME)
KERNEL_RELEASE = Matching(r"[0-9][0-9A-Za-z.+~_-]{0,63}")
FILESYSTEM_TYPE = Matching(r"[a-z0-9][a-z0-9._-]{0,31}")
# Model names are what a device or the firmware reports (SD64G, Samsung SSD 980, Raspberry Pi
# 5 Model B Rev 1.0): they say which model, not which unit, and are what results are compared
# by. They are screened like every text (a device may report its serial number as a model).
MODEL_NAME = Text(max_length=100)
# A text flashmark writes from figures and its own words (a verdict's reason, a method): it
# quotes no path or name, and is screened all the same.
MADE_TEXT = Text()
