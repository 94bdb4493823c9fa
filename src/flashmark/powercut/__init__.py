"""Does the device keep what it acknowledged? The power-cut test (docs/powercut.md).

`run_powercut` writes a journal of verifiable records at the device's pace, flushes every few
records and keeps each acknowledged flush point outside the device, cuts the power with the
user's off command while writes are in flight, waits for the same device to come back, reads
every record back and classifies it; `verify_powercut` does the checking after a cut that took
the host down too. The result is a `PowercutResult` (`flashmark.powercut/1`), rendered by
`flashmark.powercut.render`.
"""

from flashmark.powercut.plan import PowercutPlan, PowercutRequest, plan_powercut
from flashmark.powercut.result import (
    HISTORY_KIND,
    POWERCUT_SCHEMA,
    PowercutResult,
    from_document,
    to_document,
)
from flashmark.powercut.run import PowercutEvent, PowercutStopped, run_powercut

__all__ = [
    "HISTORY_KIND",
    "POWERCUT_SCHEMA",
    "PowercutEvent",
    "PowercutPlan",
    "PowercutRequest",
    "PowercutResult",
    "PowercutStopped",
    "from_document",
    "plan_powercut",
    "run_powercut",
    "to_document",
]
