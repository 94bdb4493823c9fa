"""Loading, validating and looking up the reference data set shipped in this package.

The data lives in one JSON file per seed document (`seed_000.json` ...), transcribed by hand
from the seeds' tables. Loading checks every record strictly: known units and metrics, the
published text really holds the published number, the normalised value is the published value
times the unit's factor, slugs are unique. A failure is a bug in the shipped data, so it is
raised as FlashmarkError (exit status FAILURE) naming the file and the record.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal, InvalidOperation
from functools import cache
from importlib import resources
from typing import Any, TypeVar

from flashmark.codec import WrongType, decode
from flashmark.errors import FlashmarkError, UsageError
from flashmark.references.records import (
    METRIC_UNITS,
    UNIT_FACTORS,
    Figure,
    Measurement,
    MediaKind,
    ReferenceDevice,
    Setup,
    Source,
)

# The reference data files shipped in flashmark/references/*.json.
#   1: first version.
DATA_SCHEMA = "flashmark.references.data/1"
# `references --json` (docs/references.md).
#   1: first version.
DOCUMENT_SCHEMA = "flashmark.references/1"
PUBLISHED_LABEL = "published figures, not measured here"
T = TypeVar("T")

# Cells that hold no number. "DNF" (did not finish) and "tbd" are seed 003's; "N/A" seed 001's.
ABSENT_TEXTS = frozenset({"DNF", "tbd", "N/A"})

# flashmark test names (see flashmark.bench.profiles) and the workload names of seed 002's timings.
_TEST_NAME = re.compile(
    r"^(?:(?:seq|rand)-(?:read|write)(?:-\d+[kM])?(?:-q\d+)?"
    r"|mixed-\d+[kM]-\d+r-q\d+"
    r"|pkg-install|pkg-remove|pkg-reinstall|boot)$"
)
_SLUG = re.compile(r"^seed\d{3}-[a-z0-9]+(?:-[a-z0-9]+)*$")
# The number inside a published fragment: "42,53" (decimal comma), "~1.5", "IOPS=19.1k",
# "avg=2359.23", "1690KiB/s". fio's bare "k" suffix means 1000 (not the k of "kB/s").
_NUMBER = re.compile(r"(\d+(?:[.,]\d+)?)(k(?![A-Za-z]))?")


class _DataError(Exception):
    """Internal: a record is malformed; re-raised as FlashmarkError with file and record."""


def published_number(text: str) -> Decimal | None:
    """The number a published cell or fragment holds, or None for DNF/tbd/N/A cells.

    >>> published_number("42,53")
    Decimal('42.53')
    >>> published_number("IOPS=19.1k")
    Decimal('19100.0')
    """
    if text.strip() in ABSENT_TEXTS:
        return None
    match = _NUMBER.search(text)
    if match is None:
        raise _DataError(f"no number in published text {text!r}")
    number = Decimal(match.group(1).replace(",", "."))
    return number * 1000 if match.group(2) == "k" else number


def _decimals(text: str) -> int:
    match = _NUMBER.search(text)
    if match is None or not re.search(r"[.,]", match.group(1)):
        return 0
    return len(re.split(r"[.,]", match.group(1))[1])


def _half_last_digit(figure: Figure) -> Decimal:
    """Half a unit of the last printed digit, in flashmark's unit: the rounding of the text."""
    step = Decimal(1).scaleb(-_decimals(figure.text))
    match = _NUMBER.search(figure.text)
    if match is not None and match.group(2):
        step *= 1000
    return step / 2 * figure.normalising_factor


def _typed(kind: type[T], raw: Any) -> T:
    """`raw` read as `kind` by the codec, every field of the type its hint says."""
    try:
        value: T = decode(kind, raw)
    except WrongType as wrong:
        where = ".".join(str(part) for part in getattr(wrong, "where", ()))
        raise _DataError(f"key {where!r} has {wrong.value!r}, expected {wrong.expected}") from None
    except KeyError as error:
        where = ".".join(str(part) for part in getattr(error, "where", ()))
        raise _DataError(f"missing key {where!r}") from None
    except (TypeError, ValueError) as error:
        where = ".".join(str(part) for part in getattr(error, "where", ()))
        raise _DataError(f"{where}: {error}") from None
    return value


def _figure(figure: Figure) -> Figure:
    text, value = figure.text, figure.value
    for name in (figure.unit, figure.unit_read_as):
        if name not in UNIT_FACTORS:
            raise _DataError(f"unknown unit {name!r} (known: {', '.join(UNIT_FACTORS)})")
    number = published_number(text)
    if (number is None) != (value is None):
        raise _DataError(f"figure {text!r}: value {value!r} disagrees with the text")
    if number is not None and Decimal(str(value)) != number:
        raise _DataError(f"figure {text!r}: value {value!r} is not the number printed")
    return dataclasses.replace(figure, value=None if value is None else float(value))


def normalise(figure: Figure) -> float | None:
    """The figure in flashmark's unit, computed in decimal so 42.53 MB/s is exactly 42530000."""
    if figure.value is None:
        return None
    return float(Decimal(str(figure.value)) * figure.normalising_factor)


def _measurement(raw: Any) -> Measurement:
    read = _typed(Measurement, raw)
    metric, unit, value = read.metric, read.unit, read.value
    if metric not in METRIC_UNITS:
        raise _DataError(f"unknown metric {metric!r} (known: {', '.join(METRIC_UNITS)})")
    for test in read.tests:
        if not _TEST_NAME.match(test):
            raise _DataError(f"metric {metric}: {test!r} is not a flashmark test or workload name")
    if read.block_size_bytes is not None and read.block_size_bytes <= 0:
        raise _DataError(f"metric {metric}: bad block_size_bytes {read.block_size_bytes!r}")
    published = _figure(read.published)
    also = tuple(_figure(item) for item in read.also_published)
    if unit != METRIC_UNITS[metric]:
        raise _DataError(f"metric {metric} is in {METRIC_UNITS[metric]}, not {unit!r}")
    for figure in (published, *also):
        if UNIT_FACTORS[figure.unit_read_as][1] != unit:
            raise _DataError(f"metric {metric}: {figure.text!r} in {figure.unit} is not {unit}")
    expected = normalise(published)
    if (value is None) != (expected is None) or (
        value is not None and expected is not None and abs(value - expected) > 1e-9 * expected
    ):
        raise _DataError(
            f"metric {metric}: normalised value {value!r} should be {expected!r} "
            f"({published.text} {published.unit_read_as})"
        )
    if value is None and not read.note:
        raise _DataError(f"metric {metric}: an absent figure ({published.text}) needs a note")
    if value is not None and not read.suspect:
        # A figure printed twice (fio's "1690KiB/s (1731kB/s)") must agree within the rounding
        # of both texts; one that does not is a doubt to flag, not to hide.
        for figure in also:
            other = normalise(figure)
            tolerance = _half_last_digit(figure) + _half_last_digit(published)
            if other is None or Decimal(str(abs(other - value))) > tolerance:
                raise _DataError(
                    f"metric {metric}: {figure.text} {figure.unit} disagrees with "
                    f"{published.text} {published.unit}; mark it suspect with a note"
                )
    return dataclasses.replace(
        read,
        published=published,
        also_published=also,
        value=None if value is None else float(value),
    )


def _device(raw: Any, source: Any, seed_id: str, setups: Mapping[str, Any]) -> ReferenceDevice:
    if not isinstance(raw, dict):
        raise _DataError(f"a device must be an object, not {raw!r}")
    slug = raw.get("slug")
    if not isinstance(slug, str) or not _SLUG.match(slug) or not slug.startswith(f"seed{seed_id}-"):
        raise _DataError(f"slug {slug!r} must look like seed{seed_id}-name-in-lowercase")
    setup_name = raw.get("setup")
    if not isinstance(setup_name, str) or setup_name not in setups:
        raise _DataError(f"{slug}: unknown setup {setup_name!r}")
    try:
        measurements = tuple(_measurement(item) for item in raw.get("measurements", ()))
        device = _typed(ReferenceDevice, raw | {"source": source, "setup": setups[setup_name]})
    except _DataError as error:
        raise _DataError(f"{slug}: {error}") from None
    seen: set[tuple[str, str]] = set()
    for measurement in measurements:
        for test in measurement.tests:
            if (test, measurement.metric) in seen:
                raise _DataError(f"{slug}: two figures for {measurement.metric} of {test}")
            seen.add((test, measurement.metric))
    return dataclasses.replace(device, measurements=measurements)


def parse_reference_file(text: str, origin: str) -> tuple[ReferenceDevice, ...]:
    """Validate and build the records of one data file; `origin` names it in errors."""
    try:
        document = json.loads(text)
        if not isinstance(document, dict):
            raise _DataError("the top level must be an object")
        schema = document.get("schema")
        if schema != DATA_SCHEMA:
            raise _DataError(f"schema is {schema!r}, this version reads {DATA_SCHEMA!r}")
        source = _typed(Source, document.get("source"))
        if not origin.endswith(f"seed_{source.seed_id}.json"):
            raise _DataError(
                f"holds seed {source.seed!r}; the file should be seed_{source.seed_id}.json"
            )
        setups: dict[str, Any] = {}
        for setup in _typed(tuple[Setup, ...], document.get("setups")):
            if setup.name in setups:
                raise _DataError(f"setup {setup.name!r} is defined twice")
            setups[setup.name] = next(
                raw for raw in document["setups"] if raw.get("name") == setup.name
            )
        devices = tuple(
            _device(raw, document["source"], source.seed_id, setups)
            for raw in _typed(tuple[dict[str, Any], ...], document.get("devices"))
        )
    except json.JSONDecodeError as error:
        raise FlashmarkError(f"reference data {origin} is not valid JSON: {error}") from error
    except (_DataError, InvalidOperation) as error:
        raise FlashmarkError(f"reference data {origin} is invalid: {error}") from error
    if not devices:
        raise FlashmarkError(f"reference data {origin} holds no devices")
    return devices


def build_data_set(files: Iterable[tuple[str, str]]) -> tuple[ReferenceDevice, ...]:
    """All records of (origin, text) data files, with slugs checked unique across files."""
    devices: list[ReferenceDevice] = []
    origins: dict[str, str] = {}
    for origin, text in files:
        for device in parse_reference_file(text, origin):
            if device.slug in origins:
                raise FlashmarkError(
                    f"reference slug {device.slug!r} is used in {origins[device.slug]} and {origin}"
                )
            origins[device.slug] = origin
            devices.append(device)
    return tuple(devices)


@cache
def load_references() -> tuple[ReferenceDevice, ...]:
    """Every reference record shipped with flashmark, in seed order, then as published."""
    package = resources.files("flashmark.references")
    files = sorted(
        (entry.name, entry.read_text(encoding="utf-8"))
        for entry in package.iterdir()
        if entry.name.endswith(".json")
    )
    if not files:
        raise FlashmarkError("no reference data files found in the flashmark package")
    return build_data_set(files)


def find_reference(slug: str) -> ReferenceDevice:
    """The record with this slug; UsageError naming close matches for an unknown one."""
    devices = load_references()
    for device in devices:
        if device.slug == slug:
            return device
    slugs = [device.slug for device in devices]
    wanted = slug.strip().lower()
    close = [s for s in slugs if wanted and wanted in s][:5] or difflib.get_close_matches(
        wanted, slugs, n=5, cutoff=0.5
    )
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise UsageError(f"unknown reference {slug!r}{hint} (`flashmark references` lists every slug)")


def seed_ids() -> tuple[str, ...]:
    return tuple(dict.fromkeys(device.source.seed_id for device in load_references()))


def select_references(
    kind: MediaKind | str | None = None, source: str | None = None
) -> tuple[ReferenceDevice, ...]:
    """The records of one media kind and/or one source ("2", "002", "seed002" or the file name)."""
    devices = load_references()
    if kind is not None:
        try:
            wanted_kind = MediaKind(kind)
        except ValueError:
            known = ", ".join(k.value for k in MediaKind)
            raise UsageError(
                f"unknown media kind {kind!r}: use --kind with one of {known}"
            ) from None
        devices = tuple(d for d in devices if d.media_kind is wanted_kind)
    if source is not None:
        digits = re.match(r"^(?:seed[-_]?)?(\d{1,3})(?:_[0-9a-f]+(?:\.txt)?)?$", source.strip())
        known_ids = seed_ids()
        if digits is None or digits.group(1).zfill(3) not in known_ids:
            raise UsageError(
                f"unknown source {source!r}: use --source with one of {', '.join(known_ids)}"
            )
        seed_id = digits.group(1).zfill(3)
        devices = tuple(d for d in devices if d.source.seed_id == seed_id)
    return devices


def references_document(devices: Iterable[ReferenceDevice]) -> dict[str, Any]:
    """The `flashmark references --json` document: every record with its source and setup."""
    return {
        "schema": DOCUMENT_SCHEMA,
        "label": PUBLISHED_LABEL,
        "references": [dataclasses.asdict(device) for device in devices],
    }
