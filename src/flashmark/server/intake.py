"""What the service accepts: an uploaded body checked, hashed and summarised (pure, no I/O).

An upload gets the check every incoming document gets (the same as `flashmark import`): strict,
bounded JSON of a schema in ACCEPTED_SCHEMAS, read by flashmark's own reader and checked field
by field against its types; unknown keys are dropped and named in the answer. The same document
uploaded twice has the same content hash (canonical JSON without the local `id`), so the same id.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flashmark.bench.document import SCHEMA as RESULT_SCHEMA
from flashmark.bench.job_hash import job_hash, run_job_identity
from flashmark.bench.run_result import Run
from flashmark.health.result import HEALTH_SCHEMA, HealthResult, health_summary
from flashmark.kinds.registry import DOCUMENT_KINDS
from flashmark.kinds.strict import DocumentInvalid, check_document, parse_json
from flashmark.probe.mmc import CARD_TYPE_OF_KIND, RegisterFormatError, decode_cid
from flashmark.probe.model import Cid, Device
from flashmark.server.campaign_names import campaign_problem, label_problem

# The schemas `POST /api/v1/results` accepts (GET /api/v1 lists them too), with their classes:
# benchmark runs and health readings, each kept with the facts the service finds it by (Facts,
# ReadingFacts). `flashmark upload` builds uploads of these kinds only (outgoing.py).
ACCEPTED: Mapping[str, type] = {RESULT_SCHEMA: Run, HEALTH_SCHEMA: HealthResult}
ACCEPTED_SCHEMAS = tuple(ACCEPTED)
_KINDS = {schema: DOCUMENT_KINDS[schema] for schema in ACCEPTED_SCHEMAS}
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
# Device kinds that are the medium itself (the last physical device of the probe's stack).
_MEDIA = ("sd", "emmc", "ufs", "nvme", "usb", "sata", "scsi", "virtio")


# An upload the service does not keep: `problem` names the kind (invalid-json,
# unsupported-schema, invalid-document), `pointer` the field.
UploadRejected = DocumentInvalid


@dataclass(frozen=True)
class Summary:
    """What the service searches, ranks and lists a result by (copied out of the document,
    kept as columns: storage.ResultRow adds the service's id and upload time)."""

    started_at: str
    maker: str | None
    product: str | None
    capacity_bytes: int | None
    model_key: str
    medium: str | None
    board: str | None
    profile: str
    card_serial: str | None  # the upload's card link (a salted hash), when it sent one
    headlines: Mapping[str, float | None]


@dataclass(frozen=True)
class Facts(Summary):
    """A result's summary and what a campaign compares it by."""

    job_hash: str = ""  # flashmark.bench.job_hash of the document
    job: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # what the hash is made of
    grades: Mapping[str, str | None] = dataclasses.field(default_factory=dict)  # name: verdict
    # A partial run (its card failed mid-run): the step that failed and the exit status.
    failed_step: str | None = None
    failed_status: int | None = None
    campaign: str | None = None  # the upload's campaign and board label, when it sent them
    board_label: str | None = None


@dataclass(frozen=True)
class Accepted:
    document: Mapping[str, Any]  # without the uploader's local id and unknown keys
    content_hash: str
    facts: Facts
    dropped: tuple[str, ...] = ()  # JSON pointers of the unknown keys left out


@dataclass(frozen=True)
class ReadingFacts:
    """What the service finds a health reading by, and shows of it beside a model's runs."""

    model_key: str  # the same key as the runs of its model (model_key)
    medium: str
    model: str | None
    capacity_bytes: int | None
    finished_at: str
    wear_low: float | None  # fractions of the rated life used (health.forecast.Forecast)
    wear_high: float | None
    years_low: float | None
    years_high: float | None
    bytes_per_day: float | None
    summary: str  # its answer in one line
    card_link: str | None  # the upload's card link, when it sent one


@dataclass(frozen=True)
class AcceptedReading:
    """A health reading, checked: as Accepted, with its own facts."""

    document: Mapping[str, Any]
    content_hash: str
    facts: ReadingFacts
    dropped: tuple[str, ...] = ()


def parse_upload(body: bytes) -> Accepted | AcceptedReading:
    """The body of an upload, checked; UploadRejected says what is wrong with it."""
    return accept_upload(parse_json(body))


def accept(document: Any) -> Accepted:
    """A benchmark run's document, checked as accept_upload does; any other kind is refused."""
    accepted = accept_upload(document)
    if not isinstance(accepted, Accepted):
        raise DocumentInvalid(
            "unsupported-schema", f"schema {RESULT_SCHEMA!r} expected here", "/schema"
        )
    return accepted


def accept_upload(document: Any) -> Accepted | AcceptedReading:
    """A parsed document checked against the accepted schemas and its kind's types; what an
    upload adds and no result document of its own holds (`card_link`, flashmark upload
    --link-card; `campaign` and `board_label`, --campaign and --label) is checked apart and
    kept."""
    added: dict[str, str] = {}
    if isinstance(document, dict):
        # In the upload's own order (not a set's, which the hash seed decides): the stored
        # document keeps them, after its checked keys, as they were sent.
        added = _additions({k: v for k, v in document.items() if k in UPLOAD_ADDITIONS})
        document = {k: v for k, v in document.items() if k not in UPLOAD_ADDITIONS}
    checked = check_document(document, _KINDS)
    kept = {key: value for key, value in checked.document.items() if key != "id"}
    kept.update(added)
    if isinstance(checked.value, HealthResult):
        if CAMPAIGN in added:
            raise DocumentInvalid(
                "invalid-document",
                "a campaign compares benchmark runs: a health reading joins none",
                f"/{CAMPAIGN}",
            )
        reading = dataclasses.replace(reading_facts(checked.value), card_link=added.get(CARD_LINK))
        return AcceptedReading(kept, content_hash(kept), reading, checked.dropped)
    run = checked.value
    assert isinstance(run, Run)
    facts = dataclasses.replace(
        facts_of(run),
        card_serial=added.get(CARD_LINK),
        campaign=added.get(CAMPAIGN),
        board_label=added.get(BOARD_LABEL),
    )
    return Accepted(kept, content_hash(kept), facts, checked.dropped)


# What `flashmark upload --link-card` adds to a document: 128 bits of a salted hash
# (server/upload.py card_link) in lowercase hex, enough that two cards never share one (2^64
# cards for an even chance), short enough to read.
CARD_LINK = "card_link"
CARD_LINK_DIGITS = 32
CARD_LINK_FORMAT = f"[0-9a-f]{{{CARD_LINK_DIGITS}}}"
# What `flashmark upload --campaign NAME --label LABEL` adds (server/campaign_names.py).
CAMPAIGN = "campaign"
BOARD_LABEL = "board_label"
UPLOAD_ADDITIONS = frozenset({CARD_LINK, CAMPAIGN, BOARD_LABEL})


def _additions(values: Mapping[str, Any]) -> dict[str, str]:
    """An upload's additions, each checked by its own rule (null: not sent)."""
    kept = {key: value for key, value in values.items() if value is not None}
    link = kept.get(CARD_LINK)
    if link is not None and (
        not isinstance(link, str) or re.fullmatch(CARD_LINK_FORMAT, link) is None
    ):
        raise DocumentInvalid(
            "invalid-document", "a card link is 32 lowercase hex digits, or null", "/card_link"
        )
    if (CAMPAIGN in kept) != (BOARD_LABEL in kept):
        missing = BOARD_LABEL if CAMPAIGN in kept else CAMPAIGN
        raise DocumentInvalid(
            "invalid-document",
            "a result joins a campaign with its board's label: send campaign and board_label "
            "together",
            f"/{missing}",
        )
    for key, problem in ((CAMPAIGN, campaign_problem), (BOARD_LABEL, label_problem)):
        if key in kept and (why := problem(kept[key])) is not None:
            raise DocumentInvalid("invalid-document", why, f"/{key}")
    return kept


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
    identity = run_job_identity(run)
    return Facts(
        maker=_clean(maker),
        product=_clean(product),
        capacity_bytes=device.capacity_bytes if device else None,
        model_key=model_key(device),
        medium=device.kind if device else None,
        board=_clean(run.probe.environment.board) if run.probe and run.probe.environment else None,
        profile=run.settings.profile,
        started_at=run.started_at,
        card_serial=None,  # only an upload's card link says which card it was (accept)
        headlines=headlines,
        job_hash=job_hash(identity),
        job=identity,
        grades={grade.name: grade.verdict.value if grade.verdict else None for grade in run.grades},
        failed_step=run.partial.failed_step if run.partial else None,
        failed_status=run.partial.exit_status if run.partial else None,
    )


def model_key(device: Device | None) -> str:
    """One name for every unit of the same model: for SD and eMMC the CID's manufacturer, OEM,
    product name and revision (identical in every card of a model; the serial and date differ),
    else the kind, vendor, model and capacity in GB (a USB stick or NVMe drive shows no CID)."""
    if device is None:
        return "unknown"
    cid = device.card.cid if device.card else None
    return _model_key(device.kind, cid, (device.vendor, device.model), device.capacity_bytes)


def _model_key(kind: str, cid: Cid | None, names: tuple[str | None, ...], size: int | None) -> str:
    if cid is not None:
        maker = f"{cid.manufacturer_id:02x}"
        parts = [kind, maker, cid.oem_id, cid.product_name, cid.revision]
    else:
        parts = [kind, *(name or "" for name in names), f"{round((size or 0) / 1e9)}gb"]
    return slug("-".join(part.strip() for part in parts)) or "unknown"


# A health reading's device kind: the CID layout its card_cid has.
def reading_facts(result: HealthResult) -> ReadingFacts:
    """A reading's facts. Its model key is its runs' model's: its model is the probe's vendor
    and model in one ("SanDisk Ultra 3D NVMe"), which the key's slug joins the same way."""
    card_type = CARD_TYPE_OF_KIND.get(result.device_kind)
    cid = None
    if card_type is not None and result.card_cid is not None:
        with contextlib.suppress(RegisterFormatError):
            cid = decode_cid(card_type, result.card_cid)
    forecast = result.forecast
    return ReadingFacts(
        model_key=_model_key(result.device_kind, cid, (result.model,), result.capacity_bytes),
        medium=result.device_kind,
        model=_clean(result.model),
        capacity_bytes=result.capacity_bytes,
        finished_at=result.finished_at,
        wear_low=forecast.wear_low,
        wear_high=forecast.wear_high,
        years_low=forecast.years_low,
        years_high=forecast.years_high,
        bytes_per_day=result.rate.bytes_per_day if result.rate is not None else None,
        summary=health_summary(result),
        card_link=None,  # only an upload's card link says which card it was (accept_upload)
    )


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
