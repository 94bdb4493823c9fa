"""`flashmark clean`'s terminal view: a line per leftover, then what was done in one line."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from flashmark.system.leftovers import Action
from flashmark.units import format_size

if TYPE_CHECKING:
    from flashmark.clean.result import CleanedLeftover, CleanResult

_LISTED_AT_START = 3  # paths named in the one line `run` prints; the rest are counted

_VERB = {
    Action.REMOVED: "removed",
    Action.WOULD_REMOVE: "would remove",
    Action.LEFT: "left",
    Action.FAILED: "failed",
}


def render_clean(result: CleanResult) -> str:
    """Plain text, printed as it is: a path is never wrapped, cut or read as markup."""
    lines = [_leftover_line(leftover) for leftover in result.leftovers]
    lines.append(clean_summary(result))
    return "\n".join(lines)


def _leftover_line(leftover: CleanedLeftover) -> str:
    size = "" if leftover.size_bytes is None else f", {format_size(leftover.size_bytes)}"
    line = (
        f"{_VERB[leftover.action]:<13}{shown(leftover.path)}  "
        f"({leftover.kind.value}{size}: {leftover.reason})"
    )
    if leftover.error:
        line += f": could not remove it: {leftover.error}"
    return line


def clean_summary(result: CleanResult) -> str:
    """What was done, in one line: the kind's summary and the view's last line."""
    where = " and ".join(shown(folder) for folder in result.folders)
    if not result.leftovers:
        return f"no flashmark leftovers in {where}"
    parts = []
    removed = result.with_action(Action.REMOVED)
    if removed:
        parts.append(f"removed {count(len(removed))} ({format_size(result.removed_bytes)})")
    would = result.with_action(Action.WOULD_REMOVE)
    if would:
        size = sum(leftover.size_bytes or 0 for leftover in would)
        parts.append(
            f"would remove {count(len(would))} ({format_size(size)}); "
            "run without --dry-run to remove them"
        )
    left = result.with_action(Action.LEFT)
    if left:
        parts.append(
            f"left {count(len(left))} whose owner is running or cannot be checked (see above)"
        )
    failed = result.with_action(Action.FAILED)
    if failed:
        parts.append(f"could not remove {count(len(failed))}")
    return f"{where}: " + "; ".join(parts)


def paths(leftovers: Sequence[CleanedLeftover]) -> str:
    """The first few paths, and how many more."""
    listed = [shown(leftover.path) for leftover in leftovers[:_LISTED_AT_START]]
    more = len(leftovers) - len(listed)
    return ", ".join(listed) + (f" and {more} more" if more > 0 else "")


def count(number: int) -> str:
    return f"{number} leftover{'' if number == 1 else 's'}"


def shown(path: str | Path) -> str:
    """A path on one line: a folder's name may hold a newline or other control characters."""
    text = str(path)
    return text if text.isprintable() else repr(text)
