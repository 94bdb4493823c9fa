"""What the service accepts: an uploaded body checked, hashed and summarised (pure, no I/O).

An upload is parsed strictly (UTF-8, JSON without NaN/Infinity, one object), must be a result
document of a schema listed in ACCEPTED_SCHEMAS, is read back into a Run by flashmark's own
reader (`document_to_run`, as `flashmark.kinds.registry.entry_for` does for `import`) and is then
checked field by field against the Run's type hints: the reader itself is lenient about types
(a document from flashmark is well typed), while the pages and exports of the service must
be able to trust every stored field.

The same document uploaded twice has the same content hash (canonical JSON without the
uploader's local `id`), which is how the service answers with the same id.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Union

from flashmark.bench.document import SCHEMA as RESULT_SCHEMA
from flashmark.bench.document import document_to_run
from flashmark.bench.model import Run
from flashmark.errors import FlashmarkError
from flashmark.monitor import MonitorSeries
from flashmark.probe.model import Device, ProbeReport
from flashmark.workloads.result import WorkloadResult

# The schemas `POST /api/v1/results` accepts (GET /api/v1 lists them too). A new result schema
# is added here once `document_to_run` reads it.
ACCEPTED_SCHEMAS = (RESULT_SCHEMA,)
# Headline figures kept as columns for search, percentiles and the CSV export:
# (column, test, direction, metric). The same tests `flashmark compare` leads with.
HEADLINES: tuple[tuple[str, str, str, str], ...] = (
    ("seq_read_bps", "seq-read", "read", "bw_bytes"),
    ("seq_write_bps", "seq-write", "write", "bw_bytes"),
    ("rand_read_4k_iops", "rand-read-4k", "read", "iops"),
    ("rand_write_4k_iops", "rand-write-4k", "write", "iops"),
    ("rand_read_4k_q32_iops", "rand-read-4k-q32", "read", "iops"),
    ("rand_write_4k_q32_iops", "rand-write-4k-q32", "write", "iops"),
)
HEADLINE_COLUMNS = tuple(column for column, *_ in HEADLINES)
# Columns are BIGINT in PostgreSQL: a larger number in a document is refused, not truncated.
_MAX_INT = 2**63 - 1
# No figure of a storage benchmark comes near this (10^18 B/s, ns or IOPS); the charts turn
# larger ones into infinities when they scale them, so they are refused as input.
_MAX_FLOAT = 1e18
# Device kinds that are the medium itself (the last physical device of the probe's stack).
_MEDIA = ("sd", "emmc", "ufs", "nvme", "usb", "sata", "scsi", "virtio")


class UploadRejected(FlashmarkError):
    """An upload the service does not keep: `problem` names the kind, the message says why."""

    def __init__(self, problem: str, message: str) -> None:
        super().__init__(message)
        self.problem = problem


@dataclass(frozen=True)
class Facts:
    """What the service searches and ranks a result by (copied out of the document)."""

    maker: str | None
    product: str | None
    capacity_bytes: int | None
    model_key: str
    medium: str | None
    board: str | None
    profile: str
    started_at: str
    card_serial: str | None  # as uploaded: a salted hash from `flashmark upload`
    headlines: Mapping[str, float | None]


@dataclass(frozen=True)
class Accepted:
    document: Mapping[str, Any]  # without the uploader's local id
    content_hash: str
    facts: Facts


def parse_upload(body: bytes) -> Accepted:
    """The body of an upload, checked; UploadRejected says what is wrong with it."""
    try:
        text = body.decode("utf-8")
        document = json.loads(text, parse_constant=_refuse_constant)
    except UnicodeDecodeError as error:
        raise UploadRejected("invalid-json", f"the body is not UTF-8 text ({error})") from None
    except json.JSONDecodeError as error:
        raise UploadRejected(
            "invalid-json",
            f"the body is not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})",
        ) from None
    except ValueError as error:  # NaN / Infinity
        raise UploadRejected("invalid-json", str(error)) from None
    except RecursionError:
        raise UploadRejected("invalid-json", "the JSON is nested too deeply") from None
    if not isinstance(document, dict):
        raise UploadRejected(
            "invalid-document", f"the body must be one JSON object, not {type(document).__name__}"
        )
    return accept(document)


def accept(document: Mapping[str, Any]) -> Accepted:
    """A parsed document checked against the accepted schemas and the Run's types."""
    schema = document.get("schema")
    if schema not in ACCEPTED_SCHEMAS:
        raise UploadRejected(
            "unsupported-schema",
            f"schema {schema!r} is not accepted: this service keeps "
            f"{', '.join(ACCEPTED_SCHEMAS)} (benchmark results of `flashmark run`)",
        )
    try:
        # What `flashmark import` checks (saving.entry_for reads a benchmark result with
        # document_to_run); called once here, as reading a document is most of an upload's cost.
        run = document_to_run(dict(document))
        _check_types(run, "result")
    except UploadRejected:
        raise
    except FlashmarkError as error:
        raise UploadRejected("invalid-document", str(error)) from None
    except (AttributeError, TypeError, ValueError, KeyError, IndexError, RecursionError) as error:
        # The reader indexes nested values: a list where an object belongs fails here.
        raise UploadRejected(
            "invalid-document", f"result document is malformed ({type(error).__name__}: {error})"
        ) from None
    kept = {key: value for key, value in document.items() if key != "id"}
    return Accepted(document=kept, content_hash=content_hash(kept), facts=facts_of(run))


def content_hash(document: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON (sorted keys, no spaces) of a document without its id."""
    kept = {key: value for key, value in document.items() if key != "id"}
    canonical = json.dumps(kept, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def facts_of(run: Run) -> Facts:
    device = _medium_device(run)
    card = device.card if device else None
    maker = (card.manufacturer if card else None) or (device.vendor if device else None)
    product = (card.cid.product_name if card and card.cid else None) or (
        device.model if device else None
    )
    headlines: dict[str, float | None] = {}
    tests = {test.spec.name: test for test in run.tests}
    for column, name, direction, metric in HEADLINES:
        test = tests.get(name)
        side = getattr(test, direction) if test else None
        headlines[column] = float(getattr(side, metric)) if side else None
    return Facts(
        maker=_clean(maker),
        product=_clean(product),
        capacity_bytes=device.capacity_bytes if device else None,
        model_key=model_key(device),
        medium=device.kind if device else None,
        board=_clean(run.probe.environment.board) if run.probe and run.probe.environment else None,
        profile=run.settings.profile,
        started_at=run.started_at,
        card_serial=_clean(device.serial) if device else None,
        headlines=headlines,
    )


def model_key(device: Device | None) -> str:
    """One name for every unit of the same model: for SD and eMMC the CID's manufacturer, OEM,
    product name and revision (identical in every card of a model; the serial and date differ),
    else the kind, vendor, model and capacity in GB (a USB stick or NVMe drive shows no CID)."""
    if device is None:
        return "unknown"
    cid = device.card.cid if device.card else None
    if cid is not None:
        maker = f"{cid.manufacturer_id:02x}"
        parts = [device.kind, maker, cid.oem_id, cid.product_name, cid.revision]
    else:
        size = round((device.capacity_bytes or 0) / 1e9)
        parts = [device.kind, device.vendor or "", device.model or "", f"{size}gb"]
    return slug("-".join(part.strip() for part in parts)) or "unknown"


def slug(text: str) -> str:
    """Lower case letters, digits, '.', '_' and '-' only: safe in a URL path and in HTML."""
    return re.sub(r"[^a-z0-9._]+", "-", text.lower()).strip("-")[:120]


def _medium_device(run: Run) -> Device | None:
    devices = run.probe.devices if run.probe else ()
    physical = [device for device in devices if device.kind in _MEDIA]
    return physical[-1] if physical else (devices[-1] if devices else None)


def _clean(text: str | None) -> str | None:
    if text is None:
        return None
    text = " ".join(text.split())[:200]
    return text or None


def _refuse_constant(name: str) -> None:
    raise ValueError(f"the JSON holds {name}, which is not a number a result can have")


# -- strict types ------------------------------------------------------------------------------
# A checker is made once per type hint (reading a result checks tens of thousands of values:
# per-second samples, latency percentiles), then called for every value of that type.

Checker = Callable[[Any, str], None]


def _check_types(value: Any, where: str) -> None:
    """Every field of a dataclass tree holds what its type hint says (ints within BIGINT,
    bounded finite numbers); UploadRejected names the first field that does not."""
    _checker(type(value))(value, where)  # type: ignore[arg-type]  # classes are hashable


@cache
def _hints(kind: type) -> dict[str, Any]:
    # flashmark.bench.model names these only under TYPE_CHECKING (a runtime import would be
    # circular).
    names = {"MonitorSeries": MonitorSeries, "ProbeReport": ProbeReport}
    return typing.get_type_hints(kind, localns={**names, "WorkloadResult": WorkloadResult})


@cache
def _checker(hint: Any) -> Checker:
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        options = [_checker(option) for option in typing.get_args(hint) if option is not _NONE]
        nullable = _NONE in typing.get_args(hint)

        def check_union(value: Any, where: str) -> None:
            if value is None and nullable:
                return
            first: UploadRejected | None = None
            for option in options:
                try:
                    option(value, where)
                    return
                except UploadRejected as error:
                    first = first or error
            assert first is not None
            raise first

        return check_union
    if origin is tuple:
        item = _checker(typing.get_args(hint)[0])

        def check_tuple(value: Any, where: str) -> None:
            if not isinstance(value, tuple):
                _wrong(where, "a list", value)
            for index, element in enumerate(value):
                item(element, f"{where}[{index}]")

        return check_tuple
    if origin is not None or hint is Any:
        return _free  # mappings of free-form data (e.g. notes): nothing the service reads
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        members = [member.value for member in hint]

        def check_enum(value: Any, where: str) -> None:
            if not isinstance(value, hint):
                _wrong(where, f"one of {members}", value)

        return check_enum
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass_checker(hint)
    return _SIMPLE.get(hint, _free)


def _dataclass_checker(kind: type) -> Checker:
    hints = _hints(kind)
    names = [field.name for field in dataclasses.fields(kind)]
    fields: list[tuple[str, Checker]] = []  # filled on first use: the field types may be
    # dataclasses whose checkers are being made right now

    def check_dataclass(value: Any, where: str) -> None:
        if not isinstance(value, kind):
            _wrong(where, "an object", value)
        if not fields:
            fields.extend((name, _checker(hints[name])) for name in names)
        for name, check in fields:
            check(getattr(value, name), where + "." + name)

    return check_dataclass


def _free(value: Any, where: str) -> None:
    return None


def _check_bool(value: Any, where: str) -> None:
    if type(value) is not bool:
        _wrong(where, "true or false", value)


def _check_int(value: Any, where: str) -> None:
    if type(value) is not int or not -_MAX_INT <= value <= _MAX_INT:
        _wrong(where, "a whole number within 64 bits", value)


def _check_float(value: Any, where: str) -> None:
    kind = type(value)
    # NaN fails every comparison, so the bound check refuses it too.
    if (kind is float or kind is int) and -_MAX_FLOAT <= value <= _MAX_FLOAT:
        return
    if kind is float or kind is int:
        _wrong(where, f"a number within ±{_MAX_FLOAT:g}", value)
    _wrong(where, "a number", value)


def _check_str(value: Any, where: str) -> None:
    if type(value) is not str:
        _wrong(where, "text", value)


_NONE = type(None)
_SIMPLE: dict[Any, Checker] = {
    bool: _check_bool,
    int: _check_int,
    float: _check_float,
    str: _check_str,
}


def _wrong(where: str, expected: str, value: Any) -> typing.NoReturn:
    shown = json.dumps(value, default=str)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise UploadRejected("invalid-document", f"{where} must be {expected}, not {shown}")
