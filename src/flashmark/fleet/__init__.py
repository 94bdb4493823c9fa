"""`flashmark fleet`: one benchmark on every board of an Ansible inventory, into one campaign of
a results service. The work is Ansible's (the collection in collection/, package data); this
package runs its playbook, follows each board's progress and reads the campaign's verdict
(docs/fleet.md).

    run.py: prepare_fleet and the run; ansible.py: the playbook; wheel.py: the wheel boards
    without this flashmark install; progress.py: each board's events; verdict.py: the
    campaign's verdict line. Names load when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flashmark.lazy import face_names, lazy_face

if TYPE_CHECKING:
    from flashmark.fleet.ansible import COLLECTION as COLLECTION
    from flashmark.fleet.ansible import TOKEN_ENV as TOKEN_ENV
    from flashmark.fleet.ansible import FleetRequest as FleetRequest
    from flashmark.fleet.progress import BoardProgress as BoardProgress
    from flashmark.fleet.progress import board_line as board_line
    from flashmark.fleet.run import FleetOutcome as FleetOutcome
    from flashmark.fleet.run import ordered_boards as ordered_boards
    from flashmark.fleet.run import prepare_fleet as prepare_fleet
    from flashmark.fleet.run import run_fleet as run_fleet

_NAMES = {
    ".ansible": ("COLLECTION", "TOKEN_ENV", "FleetRequest"),
    ".progress": ("BoardProgress", "board_line"),
    ".run": ("FleetOutcome", "ordered_boards", "prepare_fleet", "run_fleet"),
}
__getattr__ = lazy_face(__name__, _NAMES)
__all__ = face_names(_NAMES)
