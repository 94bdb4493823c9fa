"""`flashmark fleet run` as library calls: everything checked before any board starts
(prepare_fleet), then the playbook run with each board's progress followed (run_fleet), and the
campaign as the service has it at the end."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flashmark.bench.document import SCHEMA as RESULT_SCHEMA
from flashmark.errors import ExitStatus, FlashmarkError, UsageError
from flashmark.fleet.ansible import (
    FleetRequest,
    check_inventory,
    check_wheel,
    find_ansible_playbook,
    find_collection,
    run_playbook,
)
from flashmark.fleet.progress import BoardProgress, follow
from flashmark.fleet.verdict import to_run_again, verdict_line
from flashmark.server.campaign_names import campaign_problem, natural_key
from flashmark.server.upload import TOKEN_ENV, accepted_schemas, campaign_answer, service_origin

if TYPE_CHECKING:  # a type only: reading a campaign brings the service's result reader
    from flashmark.server.campaign import Campaign


class BoardsDroppedOut(FlashmarkError):
    """Some boards' whole results are not in the campaign (the others' are)."""

    exit_status = ExitStatus.FAILURE


@dataclass(frozen=True)
class FleetPlan:
    """A fleet run checked before any board starts: the collection to run and the campaign
    as the service has it (a board run again must join it), or None for a new one."""

    request: FleetRequest
    collection: Path
    existing: Mapping[str, Any] | None


@dataclass
class FleetOutcome:
    """What the playbook left: each board's progress (by inventory name), ansible-playbook's
    exit status, how long it took and the campaign as the service has it now."""

    status: int
    seconds: float
    boards: dict[str, BoardProgress] = field(default_factory=dict)
    campaign: Campaign | None = None

    def ordered(self) -> list[BoardProgress]:
        return ordered_boards(self.boards)

    def verdict_line(self) -> str:
        """The campaign's verdict, with the boards that never reached it (verdict.py)."""
        return verdict_line(self.campaign, self.ordered())

    def raise_dropped_out(self) -> None:
        """BoardsDroppedOut naming the boards to run again alone, when there are any."""
        again = to_run_again(self.ordered())
        if again:
            raise BoardsDroppedOut(
                f"{len(again)} of {len(self.boards)} boards' results are not whole in the "
                f"campaign: run them again alone with --limit {','.join(again)}"
            )


def ordered_boards(boards: Mapping[str, BoardProgress]) -> list[BoardProgress]:
    """Boards in their names' natural order (board-2 before board-10)."""
    return sorted(boards.values(), key=lambda board: natural_key(board.host))


def prepare_fleet(request: FleetRequest, collection: Path | None) -> FleetPlan:
    """Every check that can fail before a board is touched: the campaign's name, the service's
    address and token, the inventory, the wheel, ansible-playbook and the collection, and that the
    service answers and takes benchmark results."""
    problem = campaign_problem(request.campaign)
    if problem is not None:
        raise UsageError(f"--campaign: {problem}")
    service_origin(request.server)  # an http(s) address, or a usage error
    if not request.token:
        raise UsageError(f"uploading needs a token: --token TOKEN or {TOKEN_ENV}")
    check_inventory(request.inventory)
    if request.wheel is not None:
        check_wheel(request.wheel)
    find_ansible_playbook()
    found = find_collection(collection)
    if RESULT_SCHEMA not in accepted_schemas(request.server):
        raise UsageError(f"{request.server} does not take benchmark results ({RESULT_SCHEMA})")
    return FleetPlan(request, found, campaign_answer(request.server, request.campaign))


def run_fleet(
    plan: FleetPlan,
    log: Path,
    on_event: Callable[[Mapping[str, Any]], None],
    on_board: Callable[[BoardProgress], None],
) -> FleetOutcome:
    """Run the playbook (its output to `log`); every event goes to `on_event`, every board
    whose progress it changed to `on_board`. A playbook that stopped before any board started
    is an error with the log's last lines; otherwise the outcome, whatever the boards did."""
    started = time.monotonic()
    outcome = FleetOutcome(status=0, seconds=0.0)

    def followed(event: Mapping[str, Any]) -> None:
        on_event(event)
        changed = follow(outcome.boards, event)
        if changed is not None:
            on_board(changed)

    outcome.status = run_playbook(plan.request, plan.collection, log, followed, plan.existing)
    outcome.seconds = time.monotonic() - started
    if not outcome.boards:
        if outcome.status == 0:
            raise UsageError(f"the inventory names no board to run (its output: {log})")
        raise FlashmarkError(
            f"ansible-playbook stopped with exit status {outcome.status} before any board "
            f"started: {_tail(log)} (its output: {log})"
        )
    outcome.campaign = _campaign(plan.request.server, plan.request.campaign)
    return outcome


def _campaign(server: str, name: str) -> Campaign | None:
    # Imported when the playbook is done: it brings the service's reading of results, which
    # the run itself does not need.
    from flashmark.server.campaign import campaign_from_json

    answer = campaign_answer(server, name)
    return None if answer is None else campaign_from_json(answer)


def _tail(log: Path) -> str:
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "no output"
    return " / ".join(lines[-3:])[-600:]
