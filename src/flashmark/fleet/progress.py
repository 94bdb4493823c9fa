"""Each board's progress in the fleet playbook, from the collection's callback events (pure).

The callback (collection/plugins/callback/progress.py) writes one JSON object a line for
every flashmark task that starts or ends on a board; the outcome task carries what became of
the board's run (the playbook's `flashmark_outcome`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The states a board ends in: its whole result on the service, part of it (the run stopped
# after some tests), none (failed, refused before measuring), or Ansible could not reach it.
UPLOADED = "uploaded"
INCOMPLETE = "incomplete"
FAILED = "failed"
REFUSED = "refused"
UNREACHABLE = "unreachable"
FINAL = frozenset({UPLOADED, INCOMPLETE, FAILED, REFUSED, UNREACHABLE})


@dataclass(frozen=True)
class BoardProgress:
    host: str
    state: str = "waiting"  # waiting, running, or one of FINAL
    step: str = ""  # the flashmark task it runs or ran last ("plan", "measure", "upload")
    message: str = ""  # why it failed or was refused, in flashmark's words
    result: int | None = None  # its run's id in the board's history
    uploaded: int | None = None  # its result's id on the service
    url: str | None = None
    tests: int = 0
    seconds: float | None = None  # how long its run took

    @property
    def done(self) -> bool:
        return self.state in FINAL


def follow(boards: dict[str, BoardProgress], event: Mapping[str, Any]) -> BoardProgress | None:
    """`boards` after one event; the board it changed, or None (an event of no board, or of
    a board that had already ended)."""
    host = event.get("host")
    if not isinstance(host, str):
        return None
    board = boards.get(host, BoardProgress(host))
    if board.done:
        return None
    kind = event.get("event")
    step = str(event.get("task", "")).removeprefix("flashmark").strip()
    outcome = event.get("outcome")
    if kind == "start":
        changed = dataclasses.replace(board, state="running", step=step)
    elif kind == "unreachable":
        changed = dataclasses.replace(
            board, state=UNREACHABLE, step=step, message=str(event.get("message", ""))
        )
    elif isinstance(outcome, Mapping) and outcome.get("state") in FINAL:
        changed = _with_outcome(board, outcome)
    elif kind == "failed":
        message = str(event.get("message") or f"the task {event.get('task')} failed")
        changed = dataclasses.replace(board, state=FAILED, step=step, message=message)
    else:
        return None
    boards[host] = changed
    return changed


def _with_outcome(board: BoardProgress, outcome: Mapping[str, Any]) -> BoardProgress:
    def whole(key: str) -> int | None:
        value = outcome.get(key)
        return value if type(value) is int else None

    seconds = outcome.get("seconds")
    return dataclasses.replace(
        board,
        state=str(outcome["state"]),
        step=str(outcome.get("step") or board.step),
        message=str(outcome.get("message") or ""),
        result=whole("result"),
        uploaded=whole("uploaded"),
        url=str(outcome["url"]) if isinstance(outcome.get("url"), str) else None,
        tests=whole("tests") or 0,
        seconds=float(seconds) if isinstance(seconds, int | float) else None,
    )


def board_line(board: BoardProgress, width: int = 12) -> str:
    """One line for a board: its label, its state, and what it came to."""
    label = board.host.ljust(width)
    if board.state == UPLOADED:
        took = f" in {board.seconds:.0f} s" if board.seconds is not None else ""
        return (
            f"{label} uploaded     run {board.result}{took}, on the service as result "
            f"{board.uploaded}: {board.url}"
        )
    if board.state == INCOMPLETE:
        return (
            f"{label} incomplete   the run stopped at {board.step}: {board.message}; its "
            f"{board.tests} test(s) are on the service as result {board.uploaded}"
        )
    if board.state in (FAILED, REFUSED, UNREACHABLE):
        at = f" at {board.step}" if board.step and board.state == FAILED else ""
        return f"{label} {board.state.ljust(12)} {board.message or 'no reason given'}{at}"
    return f"{label} {board.state.ljust(12)} {board.step}"
