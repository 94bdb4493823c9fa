"""Everything that reads or holds the host: OS roots, mounts, disk counters, device stacks and
identities, device safety, private folders and locks, the watchdog, signals and leftovers
(docs/design.md, "The floors"). The command line uses only the names below: how a signal
stops a command, and the bounds a device must answer within. Names load when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flashmark.lazy import face_names, lazy_face

if TYPE_CHECKING:
    from flashmark.system.signals import signals_held as signals_held
    from flashmark.system.signals import signals_raise as signals_raise
    from flashmark.system.watchdog import DEFAULT_FLOOR_S as DEFAULT_FLOOR_S
    from flashmark.system.watchdog import DeviceHung as DeviceHung

_NAMES = {
    ".signals": ("signals_held", "signals_raise"),
    ".watchdog": ("DEFAULT_FLOOR_S", "DeviceHung"),
}
__getattr__ = lazy_face(__name__, _NAMES)
__all__ = face_names(_NAMES)
