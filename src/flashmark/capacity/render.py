"""A capacity probe in words: its verdict sentence and its table in the terminal."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from flashmark.capacity.result import CapacityResult


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


def render_capacity(result: CapacityResult) -> Group:
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="dim", no_wrap=True)
    table.add_column(overflow="fold")
    table.add_row("device", result.device)
    table.add_row("claims", _size(result.claimed_bytes))
    table.add_row(
        "real",
        f"{_size(result.real_bytes)}, exact to {result.granularity_bytes} bytes",
    )
    style = {"genuine": "green", "fake": "bold red"}.get(result.verdict, "yellow")
    table.add_row("verdict", Text(verdict_sentence(result), style=style))
    evidence = result.evidence
    layout = evidence.layout
    table.add_row(
        "method",
        f"{layout.get('ruler_marks', 0)} signature blocks every "
        f"{layout.get('ruler_step', 0) // 2**20} MiB and a "
        f"{layout.get('window_bytes', 0) // 2**20} MiB window at the end, read back one block "
        f"at a time after a {layout.get('flush_bytes', 0) // 2**20} MiB cache flush; "
        f"{len(evidence.steps)} follow-up test(s); {evidence.blocks_written} blocks written, "
        f"{evidence.blocks_read} read, {result.duration_s:.1f} s",
    )
    table.add_row("evidence", _evidence(result))
    if result.backup is not None:
        table.add_row(
            "restored",
            f"{result.backup.ranges} range(s), {result.backup.bytes:,} bytes, read back "
            "and checked",
        )
    else:
        table.add_row("restored", "nothing (--destructive: the probed blocks were overwritten)")
    for note in result.notes:
        table.add_row("note", note)
    return Group(Text(f"capacity of {result.device}", style="bold"), table)


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
