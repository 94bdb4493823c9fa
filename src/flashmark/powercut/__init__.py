"""Does the device keep what it acknowledged? The power-cut test (docs/powercut.md).

`run_powercut` writes verifiable records, keeps each acknowledged flush point outside the
device, cuts the power while writes are in flight, reads every record back and classifies it;
`run_host_down_cycle` and `verify_powercut` do it over a reboot, with the flush points kept
on another machine through ssh (`keep_entries` there). The result is a `PowercutResult`.
Names load when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flashmark.lazy import face_names, lazy_face

if TYPE_CHECKING:
    from flashmark.powercut.hostdown import run_host_down_cycle as run_host_down_cycle
    from flashmark.powercut.hostdown import verify_powercut as verify_powercut
    from flashmark.powercut.kind import POWERCUT as POWERCUT
    from flashmark.powercut.plan import DEFAULT_AREA_BYTES as DEFAULT_AREA_BYTES
    from flashmark.powercut.plan import FILESYSTEMS as FILESYSTEMS
    from flashmark.powercut.plan import PowercutPlan as PowercutPlan
    from flashmark.powercut.plan import PowercutRequest as PowercutRequest
    from flashmark.powercut.plan import plan_powercut as plan_powercut
    from flashmark.powercut.remote import SSH_ENV as SSH_ENV
    from flashmark.powercut.remote import RemoteSpec as RemoteSpec
    from flashmark.powercut.remote import remote_spec as remote_spec
    from flashmark.powercut.result import HISTORY_KIND as HISTORY_KIND
    from flashmark.powercut.result import POWERCUT_SCHEMA as POWERCUT_SCHEMA
    from flashmark.powercut.result import RAW as RAW
    from flashmark.powercut.result import PowercutResult as PowercutResult
    from flashmark.powercut.result import from_document as from_document
    from flashmark.powercut.result import to_document as to_document
    from flashmark.powercut.run import PowercutEvent as PowercutEvent
    from flashmark.powercut.run import PowercutStopped as PowercutStopped
    from flashmark.powercut.run import run_powercut as run_powercut
    from flashmark.powercut.store import SSH_ORIGINAL_COMMAND as SSH_ORIGINAL_COMMAND
    from flashmark.powercut.store import RunStore as RunStore
    from flashmark.powercut.store import forced_request as forced_request
    from flashmark.powercut.store import keep_entries as keep_entries

_NAMES = {
    ".hostdown": ("run_host_down_cycle", "verify_powercut"),
    ".kind": ("POWERCUT",),
    ".plan": (
        "DEFAULT_AREA_BYTES",
        "FILESYSTEMS",
        "PowercutPlan",
        "PowercutRequest",
        "plan_powercut",
    ),
    ".remote": ("SSH_ENV", "RemoteSpec", "remote_spec"),
    ".result": (
        "HISTORY_KIND",
        "POWERCUT_SCHEMA",
        "RAW",
        "PowercutResult",
        "from_document",
        "to_document",
    ),
    ".run": ("PowercutEvent", "PowercutStopped", "run_powercut"),
    ".store": ("SSH_ORIGINAL_COMMAND", "RunStore", "forced_request", "keep_entries"),
}
__getattr__ = lazy_face(__name__, _NAMES)
__all__ = face_names(_NAMES)
