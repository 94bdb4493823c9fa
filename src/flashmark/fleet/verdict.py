"""The last line of `flashmark fleet run`: the campaign's verdict (the service's), with the
boards whose whole result never reached it and how to run them again alone (pure)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from flashmark.fleet.progress import INCOMPLETE, UPLOADED, BoardProgress

if TYPE_CHECKING:  # a type only: the campaign module brings the service's result reader
    from flashmark.server.campaign import Campaign


def to_run_again(boards: Iterable[BoardProgress]) -> list[str]:
    """The boards whose whole result is not on the service, in the order given."""
    return [board.host for board in boards if board.state != UPLOADED]


def verdict_line(campaign: Campaign | None, boards: Iterable[BoardProgress]) -> str:
    """`verdict: ...`: the campaign's outliers and incomplete boards, then the boards that
    dropped out before uploading (refused, failed, unreachable), and the --limit to run
    them again."""
    shown = list(boards)
    parts = [campaign.verdict if campaign is not None else "no board uploaded a result"]
    # An incomplete board's tests are on the service: the campaign's verdict names it.
    dropped = [board for board in shown if board.state not in (UPLOADED, INCOMPLETE)]
    if dropped:
        named = "; ".join(f"{board.host}: {board.state}" for board in dropped)
        parts.append(f"{len(dropped)} not on the service ({named})")
    again = to_run_again(shown)
    if again:
        parts.append(f"run them again alone with --limit {','.join(again)}")
    return "verdict: " + "; ".join(parts)
