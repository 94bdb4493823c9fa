"""A capacity probe in words: its verdict sentence and its facts, the view every format is
written from (flashmark.views)."""

from __future__ import annotations

from flashmark.capacity.result import CapacityResult
from flashmark.views.model import Cell, Fact, Facts, Sentence, Tone, View


def _size(value: int | None) -> str:
    if value is None:
        return "unknown"
    return f"{value:,} bytes ({value / 1e9:.2f} GB, {value / 2**30:.2f} GiB)"


_BEHAVIOUR_TEXT = {
    "wraps": "addresses beyond it wrap onto the start (data written there overwrites data "
    "already stored)",
    "zeros": "writes beyond it are dropped and read back as zeros",
    "erased": "writes beyond it are dropped and read back as 0xFF",
    "drops": "writes beyond it are dropped (the old content reads back)",
    "corrupts": "blocks beyond it read back as something else than was written",
}


def verdict_sentence(result: CapacityResult) -> str:
    if result.verdict == "genuine":
        return (
            f"genuine: every probed block up to the claimed {result.claimed_bytes / 1e9:.2f} GB "
            "held its data"
        )
    behaviours = "; ".join(_BEHAVIOUR_TEXT.get(b, b) for b in result.behaviour)
    if result.real_bytes is None:
        return f"{result.verdict}: real size not pinned down; {behaviours}"
    share = result.real_bytes / result.claimed_bytes * 100
    return (
        f"{result.verdict}: stores {result.real_bytes / 1e9:.2f} GB of the "
        f"{result.claimed_bytes / 1e9:.2f} GB it claims ({share:.1f}%); {behaviours}"
    )


def capacity_rows(result: CapacityResult) -> list[tuple[str, str]]:
    """The probe's facts as (label, text): every view (terminal, Markdown, HTML) shows these."""
    evidence = result.evidence
    layout = evidence.layout
    rows = [
        ("device", result.device),
        ("claims", _size(result.claimed_bytes)),
        ("real", f"{_size(result.real_bytes)}, exact to {result.granularity_bytes} bytes"),
        ("verdict", verdict_sentence(result)),
        (
            "method",
            f"{layout.get('ruler_marks', 0)} signature blocks every "
            f"{layout.get('ruler_step', 0) // 2**20} MiB and a "
            f"{layout.get('window_bytes', 0) // 2**20} MiB window at the end, read back one "
            f"block at a time after a {layout.get('flush_bytes', 0) // 2**20} MiB cache flush; "
            f"{len(evidence.steps)} follow-up test(s); {evidence.blocks_written} blocks written, "
            f"{evidence.blocks_read} read, {result.duration_s:.1f} s",
        ),
        ("evidence", _evidence(result)),
    ]
    backup = result.backup
    restored = (
        f"{backup.ranges} range(s), {backup.bytes:,} bytes, read back and checked"
        if backup is not None
        else "nothing (--destructive: the probed blocks were overwritten)"
    )
    rows.append(("restored", restored))
    rows += [("note", note) for note in result.notes]
    return rows


CSV_COLUMNS = (
    "id", "started_at", "device", "card_cid", "verdict", "claimed_bytes", "real_bytes",
    "granularity_bytes", "behaviour", "destructive", "blocks_written", "blocks_read",
    "anomalies_total", "duration_s",
)  # fmt: skip
_TONE: dict[str, Tone] = {"genuine": "pass", "fake": "fail"}


def capacity_view(result: CapacityResult) -> View:
    """The probe's verdict and facts; its CSV row in the stored units (bytes, seconds)."""
    number = f" #{result.id}" if result.id is not None else ""
    return View(
        title=f"flashmark capacity{number}: {result.device}, {result.started_at}",
        verdict=verdict_sentence(result),
        badge=result.verdict,
        tone=_TONE.get(result.verdict, "uncertain"),
        blocks=(
            Sentence(f"capacity of {result.device}", tone="strong", shown="terminal"),
            Facts(
                tuple(
                    Fact(label, text, tone=_TONE.get(result.verdict, "uncertain"), shown="terminal")
                    if label == "verdict"
                    else Fact(label, text)
                    for label, text in capacity_rows(result)
                )
            ),
        ),
        records=(_record(result),),
    )


def _record(r: CapacityResult) -> tuple[Cell, ...]:
    return (
        r.id, r.started_at, r.device, r.card_cid, r.verdict, r.claimed_bytes, r.real_bytes,
        r.granularity_bytes, " ".join(r.behaviour), "yes" if r.destructive else "no",
        r.evidence.blocks_written, r.evidence.blocks_read, r.evidence.anomalies_total,
        round(r.duration_s, 3),
    )  # fmt: skip


def _evidence(result: CapacityResult) -> str:
    evidence = result.evidence
    if not evidence.anomalies_total:
        return "every block came back as written"
    first = evidence.anomalies[0]
    what = (
        f"the data written at byte {first.origin}"
        if first.origin is not None
        else f"{first.found.value}"
    )
    return (
        f"{evidence.anomalies_total} block(s) did not come back as written; the first, at byte "
        f"{first.offset}, read back {what}"
    )
