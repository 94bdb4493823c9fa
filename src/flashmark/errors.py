"""The exception tree of flashmark and the exit status each kind of failure maps to.

The library raises these; only the CLI turns them into a one-line message and an exit code.
Every message names the cause, the place, and the flag or command that fixes it.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Generic, TypeVar

Partial = TypeVar("Partial")


class ExitStatus(IntEnum):
    """Process exit codes. Documented in README.md ("Exit codes")."""

    OK = 0
    FAILURE = 1  # an unexpected error (a bug): run again with --debug and report it
    USAGE = 2  # bad command-line input (click uses 2 as well)
    ENVIRONMENT = 3  # the machine lacks something: fio missing or too old, no root for a step
    TARGET = 4  # the target cannot be used: missing, full, read-only, no permission, refused
    DEVICE = 5  # the device failed while being measured: I/O error, device gone
    HISTORY = 6  # the history database cannot be used: not a database, locked, read-only, ...
    UNSAVED = 7  # measured, but the save failed: the result is in a recovery file (`import`)
    REQUIREMENT = 8  # `run --require`: a named grade failed, is uncertain or was not graded
    SERVICE = 9  # the results service could not be reached, refused the token or the result
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), the shell convention
    TERMINATED = 143  # SIGTERM (128 + SIGTERM)
    HANGUP = 129  # SIGHUP (128 + SIGHUP): the terminal or the ssh session went away


class FlashmarkError(Exception):
    """Base of every error flashmark reports to a user as one line."""

    exit_status: ExitStatus = ExitStatus.FAILURE


class StoppedEarly(FlashmarkError, Generic[Partial]):
    """A command stopped before its end: `partial` is what it measured until then, `cause`
    why; the exit status is the cause's, or the class's where the cause has none."""

    def __init__(self, partial: Partial, cause: BaseException) -> None:
        super().__init__(str(cause) or type(cause).__name__)
        self.partial = partial
        self.cause = cause
        self.exit_status = getattr(cause, "exit_status", type(self).exit_status)


class UsageError(FlashmarkError):
    """A value given on the command line is not valid (a size, a profile name, an id)."""

    exit_status = ExitStatus.USAGE


class EnvironmentProblem(FlashmarkError):
    """Something the machine must provide is missing or unusable."""

    exit_status = ExitStatus.ENVIRONMENT


class FioNotFound(EnvironmentProblem):
    pass


class FioTooOld(EnvironmentProblem):
    pass


class TargetError(FlashmarkError):
    """The target cannot be measured as asked."""

    exit_status = ExitStatus.TARGET


class TargetNotFound(TargetError):
    @classmethod
    def moved(cls, folder: object) -> TargetNotFound:
        """A folder the command had checked is gone when it comes to use it: moved or removed
        by someone else meanwhile (the one wording of every command for it)."""
        return cls(f"{folder}: no such folder (moved or removed meanwhile)")


class NotEnoughSpace(TargetError):
    pass


class ReadOnlyTarget(TargetError):
    pass


class TargetPermissionDenied(TargetError):
    pass


class DirectIONotSupported(TargetError):
    pass


class UnsafeDevice(TargetError):
    """A destructive run was refused: the device is mounted, in use, or holds the system."""


class ConfirmationRefused(TargetError):
    pass


class DeviceFailed(FlashmarkError):
    """The device returned errors or disappeared while it was being measured."""

    exit_status = ExitStatus.DEVICE


class FioFailed(FlashmarkError):
    """fio exited with an error that is not a device failure."""


class FioOutputError(FlashmarkError):
    """fio's output did not have the shape flashmark expects (quoted in the message)."""


class HistoryError(FlashmarkError):
    """The history database cannot be opened, migrated, read or written."""

    exit_status = ExitStatus.HISTORY


class HistoryNotADatabase(HistoryError):
    """The file is not an SQLite database, is damaged, or is some other program's database."""


class HistoryLocked(HistoryError):
    """Another program holds a lock on the history for longer than the busy timeout."""


class HistoryReadOnly(HistoryError):
    """The history file, or the folder SQLite writes its journal into, cannot be written."""


class HistoryTooNew(HistoryError):
    """The history was migrated by a newer flashmark; reading it could misread it."""


class HistoryFolderMissing(HistoryError):
    """An explicit --db / FLASHMARK_DB names a folder that does not exist (never created:
    a mistyped path must not grow a tree of folders)."""


class RunNotFound(HistoryError):
    exit_status = ExitStatus.USAGE


class ResultNotSaved(HistoryError):
    """A result was measured but could not be saved; it was printed and kept in a file."""

    exit_status = ExitStatus.UNSAVED


class RequirementNotMet(FlashmarkError):
    """`run --require`: a named grade is not "pass" (fail, uncertain, or not graded). Raised
    after the result was saved and printed: the measurement is kept either way."""

    exit_status = ExitStatus.REQUIREMENT


class ResultFormatError(FlashmarkError):
    """A saved result document is not one this version can read."""


class Interrupted(FlashmarkError):
    """The run was stopped by a signal; raised from the signal handler so cleanup runs.

    The message does not say what happened to the test file: the cleanup that runs on the way
    out adds that as an outcome (`add_outcome`) once it knows."""

    def __init__(self, signal_name: str, exit_status: ExitStatus) -> None:
        super().__init__(f"stopped by {signal_name}")
        self.signal_name = signal_name
        self.exit_status = exit_status


def add_outcome(error: BaseException, outcome: str) -> None:
    """Attach what the cleanup did (e.g. "the test file X was removed") to an error on its way
    out, so the one-line message tells the truth about what was left behind. Stored as an
    exception note (PEP 678), which --debug tracebacks show as well."""
    error.add_note(outcome)


def outcomes(error: BaseException) -> tuple[str, ...]:
    return tuple(getattr(error, "__notes__", ()))


def printable(text: str) -> str:
    """`text` with control characters (a newline in a folder name) escaped, so a message that
    names a user's path stays one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
