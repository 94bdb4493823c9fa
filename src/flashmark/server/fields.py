"""The words the upload allow-list (allowlist.py) is written in: one rule per kind of field.

A rule builds the value sent from the value saved, or says it cannot be sent (`NotSent`);
containers send only the keys their table lists. The table chooses what a value that cannot be
sent becomes (`.or_null()`, `.or_withheld()`, `ListOf(..., drop=True)`); otherwise the upload is
refused, naming the field. A text other than flashmark's own words (`OneOf`) is sent only when
identifiers.identifier_in finds nothing in it. Each rule also says in a few words what it sends
(`shown`, `rows`: the table `flashmark upload --fields` prints).
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from flashmark.codec import MAX_FLOAT, MAX_INT
from flashmark.server.identifiers import Known, identifier_in

# What a text field holds on the service when its value stays here: a value withheld, not a
# result missing. Uploads of earlier flashmark versions hold WITHHELD_BEFORE instead.
WITHHELD = "(withheld)"
WITHHELD_BEFORE = "(not uploaded)"
# What a page says of it when pointed at (its title attribute).
WITHHELD_TIP = "not shared by uploads: this value stays on the machine that measured"


class NotSent(Exception):
    """A value its rule does not send; `where` is its place in the document."""

    def __init__(self, where: str, why: str) -> None:
        super().__init__(f"{where}: {why}")
        self.where = where
        self.why = why


class Rule(ABC):
    """How one field is sent."""

    @abstractmethod
    def build(self, value: Any, where: str, known: Known) -> Any:
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

    def build(self, value: Any, where: str, known: Known) -> Any:
        return None if value is None else self.rule.build(value, where, known)

    def shown(self) -> str:
        return f"{self.rule.shown()}, or null"

    def rows(self, where: str) -> Iterator[tuple[str, str]]:
        for place, text in self.rule.rows(where):
            yield place, f"{text}, or null" if place == where else text


@dataclass(frozen=True)
class _Fallback(Rule):
    rule: Rule
    instead: Any

    def build(self, value: Any, where: str, known: Known) -> Any:
        if value is None:
            return None
        try:
            return self.rule.build(value, where, known)
        except NotSent:
            return self.instead

    def shown(self) -> str:
        return f"{self.rule.shown()}, else {json.dumps(self.instead)}"

    def rows(self, where: str) -> Iterator[tuple[str, str]]:
        for place, text in self.rule.rows(where):
            yield place, f"{text}, else {json.dumps(self.instead)}" if place == where else text


# -- leaves ------------------------------------------------------------------------------------


class OneOf(Rule):
    """One of flashmark's own words (an enum, a test name, a grade's title): sent as it is."""

    def __init__(self, *choices: str) -> None:
        self.choices = frozenset(choices)

    def build(self, value: Any, where: str, known: Known) -> Any:
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

    def build(self, value: Any, where: str, known: Known) -> Any:
        if not isinstance(value, str) or len(value) > self.max_length:
            raise NotSent(where, "not text of its size")
        if not re.fullmatch(self.pattern, value):
            raise NotSent(where, f"not of the shape {self.pattern}")
        if self.screened:
            _screen(value, where, known)
        return value

    def shown(self) -> str:
        return f"text of the shape {self.pattern}" + (", screened" if self.screened else "")


@dataclass(frozen=True)
class Text(Rule):
    """Text made by flashmark from figures and its own words, or a model name a device reports:
    sent when no identifier is found in it."""

    max_length: int = 500

    def build(self, value: Any, where: str, known: Known) -> Any:
        if not isinstance(value, str) or len(value) > self.max_length:
            raise NotSent(where, "not text of its size")
        _screen(value, where, known)
        return value

    def shown(self) -> str:
        return f"text of at most {self.max_length} characters, screened"


@dataclass(frozen=True)
class Chosen(Rule):
    """A name the user chose to send with an upload (a campaign, a board label): sent as it is
    when its own check (`problem`: why it cannot be sent, or None) passes. Not screened for
    this machine's names: sending it is the user's choice."""

    problem: Callable[[object], str | None]

    def build(self, value: Any, where: str, known: Known) -> Any:
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

    def build(self, value: Any, where: str, known: Known) -> Any:
        if value is None:
            return None
        if not isinstance(value, str):
            raise NotSent(where, "not text")
        return WITHHELD

    def shown(self) -> str:
        return f"withheld: {json.dumps(WITHHELD)}"


@dataclass(frozen=True)
class MaskedCid(Withheld):
    """A card's CID register: WITHHELD here, which outgoing.py replaces with the register
    with its serial (PSN) and CRC zeroed where that decodes and passes the screen."""

    def shown(self) -> str:
        return f"the CID with its serial (PSN) and CRC zeroed, else {json.dumps(WITHHELD)}"


@dataclass(frozen=True)
class Always(Rule):
    """A fixed value instead of what the document holds (an empty list of messages)."""

    value: Any

    def build(self, value: Any, where: str, known: Known) -> Any:
        return list(self.value) if isinstance(self.value, tuple) else self.value

    def shown(self) -> str:
        return f"always {json.dumps(self.value)}"


@dataclass(frozen=True)
class Number(Rule):
    """A finite number within ±10^18 (a figure, a setting)."""

    def build(self, value: Any, where: str, known: Known) -> Any:
        if type(value) not in (int, float) or not -MAX_FLOAT <= value <= MAX_FLOAT:
            raise NotSent(where, "not a finite number")
        return value

    def shown(self) -> str:
        return f"a number within ±{MAX_FLOAT:g}"


@dataclass(frozen=True)
class Whole(Rule):
    """A whole number within 64 bits (a count, a size in bytes)."""

    def build(self, value: Any, where: str, known: Known) -> Any:
        if type(value) is not int or not -MAX_INT <= value <= MAX_INT:
            raise NotSent(where, "not a whole number within 64 bits")
        return value

    def shown(self) -> str:
        return "a whole number within 64 bits"


@dataclass(frozen=True)
class Flag(Rule):
    def build(self, value: Any, where: str, known: Known) -> Any:
        if type(value) is not bool:
            raise NotSent(where, "not true or false")
        return value

    def shown(self) -> str:
        return "true or false"


@dataclass(frozen=True)
class DeviceNode(Rule):
    """/dev/NAME with a kernel device name (/dev/mmcblk0p2): says which kind of device, not
    which one. /dev/disk/by-id/... (serial numbers), /dev/mapper/... and network sources are not
    of this shape."""

    name: Rule

    def build(self, value: Any, where: str, known: Known) -> Any:
        if not isinstance(value, str) or not value.startswith("/dev/"):
            raise NotSent(where, "not a device node")
        return "/dev/" + self.name.build(value.removeprefix("/dev/"), where, known)

    def shown(self) -> str:
        return f"/dev/ and {self.name.shown()}"


@dataclass(frozen=True)
class MountOptions(Rule):
    """A mount's options, only those named in `names` with a short plain value: the others
    (a network mount's user, address or credentials file) are left out."""

    names: frozenset[str]

    def build(self, value: Any, where: str, known: Known) -> Any:
        if not isinstance(value, str):
            raise NotSent(where, "not text")
        kept = []
        for option in value.split(","):
            name, _, setting = option.partition("=")
            if name not in self.names or not re.fullmatch(r"[A-Za-z0-9_.:-]{0,32}", setting):
                continue
            if setting.isdecimal() or identifier_in(setting, known) is None:
                kept.append(option)
        return ",".join(kept)

    def shown(self) -> str:
        return f"only the {len(self.names)} options that change speed, with short values"


# -- containers --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fields(Rule):
    """An object: only the keys listed here, in this order; a key the document lacks (an
    older document) stays absent."""

    fields: Mapping[str, Rule]

    def build(self, value: Any, where: str, known: Known) -> Any:
        if not isinstance(value, Mapping):
            raise NotSent(where, "not an object")
        return {
            key: rule.build(value[key], f"{where}.{key}", known)
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

    def build(self, value: Any, where: str, known: Known) -> Any:
        if not isinstance(value, list):
            raise NotSent(where, "not a list")
        sent = []
        for index, element in enumerate(value):
            try:
                sent.append(self.item.build(element, f"{where}[{index}]", known))
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

    def build(self, value: Any, where: str, known: Known) -> Any:
        if not isinstance(value, Mapping):
            raise NotSent(where, "not an object")
        return {
            self.keys.build(key, f"{where} key", known): self.values.build(
                item, f"{where}.{key}", known
            )
            for key, item in value.items()
        }

    def shown(self) -> str:
        return "an object"

    def rows(self, where: str) -> Iterator[tuple[str, str]]:
        yield from self.keys.rows(f"{where} key")
        yield from self.values.rows(f"{where}.KEY")


def _screen(text: str, where: str, known: Known) -> None:
    found = identifier_in(text, known)
    if found is not None:
        raise NotSent(where, f"holds {found}")
