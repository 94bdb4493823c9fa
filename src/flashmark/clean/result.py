"""What `flashmark clean` found and did, and its JSON document (`flashmark.clean/1`,
docs/leftovers.md). Printed, never kept in the history.

Schema history:
  flashmark.clean/1: first version.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flashmark.codec import Codec, document, written
from flashmark.system.leftovers import Action, CleanReport, LeftoverKind, Outcome, Owner, OwnerState

CLEAN_SCHEMA = "flashmark.clean/1"


@dataclass(frozen=True)
class CleanedLeftover:
    """One entry a killed run left, and what was done with it."""

    path: str
    kind: LeftoverKind
    action: Action
    owner_state: OwnerState
    reason: str  # why the owner is alive, dead or unknown, for people
    error: str | None  # why a removal failed, for people
    size_bytes: int | None  # None when it could not be read (another user's folder)
    pid: int | None
    owner: Owner | None
    # The removal was refused for want of permission (made by another user, or with sudo).
    denied: bool = field(default=False, metadata=document(saved=False))

    @classmethod
    def of(cls, outcome: Outcome) -> CleanedLeftover:
        leftover = outcome.leftover
        return cls(
            path=str(leftover.path),
            kind=leftover.kind,
            action=outcome.action,
            owner_state=leftover.state,
            reason=leftover.reason,
            error=outcome.error,
            size_bytes=leftover.size_bytes,
            pid=leftover.pid,
            owner=leftover.owner,
            denied=outcome.denied,
        )


@dataclass(frozen=True)
class CleanResult:
    """The folders looked in and every leftover found there, in their order."""

    flashmark_version: str
    dry_run: bool
    folders: tuple[str, ...]
    leftovers: tuple[CleanedLeftover, ...]

    @classmethod
    def of(cls, report: CleanReport, version: str) -> CleanResult:
        return cls(
            flashmark_version=version,
            dry_run=report.dry_run,
            folders=tuple(str(folder) for folder in report.folders),
            leftovers=tuple(CleanedLeftover.of(outcome) for outcome in report.outcomes),
        )

    def with_action(self, *actions: Action) -> tuple[CleanedLeftover, ...]:
        return tuple(leftover for leftover in self.leftovers if leftover.action in actions)

    @property
    @written(before="leftovers")
    def removed_bytes(self) -> int:
        return sum(leftover.size_bytes or 0 for leftover in self.with_action(Action.REMOVED))


CLEAN_DOCUMENT = Codec(CleanResult, CLEAN_SCHEMA, "clean")
