"""Running the fleet playbook: ansible-playbook (ansible-core, beside flashmark's Python first,
then on the PATH), the collection (the one this package carries, fleet/collection, or
--collection, linked under a temporary ansible_collections folder so nothing needs installing),
the wheel boards without this flashmark install (--wheel, or one made of the running
flashmark: wheel.py), and each board's events, which the collection's callback writes to a file
followed here. The upload token reaches Ansible in its environment (FLASHMARK_TOKEN), never on
a command line.
"""

from __future__ import annotations

import contextlib
import json
import locale
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import flashmark
from flashmark.errors import EnvironmentProblem, UsageError
from flashmark.fleet.wheel import build_running_wheel
from flashmark.install_hint import add_extra

# The collection this package carries (package data: pyproject.toml).
COLLECTION = Path(__file__).resolve().parent / "collection"
PLAYBOOK = Path("playbooks") / "fleet.yml"
CALLBACK = "flashmark.fleet.progress"
EVENTS_ENV = "FLASHMARK_FLEET_EVENTS"  # the callback's file (plugins/callback/progress.py)
TOKEN_ENV = "FLASHMARK_TOKEN"
# How often the events file is read while the playbook runs.
POLL_S = 0.2
# ansible-playbook gets this long to stop after SIGTERM (it stops its workers), then SIGKILL.
STOP_S = 10.0


class AnsibleMissing(EnvironmentProblem):
    """ansible-playbook cannot be found, or the collection is not where it was looked for."""


@dataclass(frozen=True)
class FleetRequest:
    """`flashmark fleet run` as data: the inventory, the campaign and the benchmark."""

    inventory: Path
    campaign: str
    server: str
    profile: str
    token: str
    size_bytes: int | None = None
    runtime_s: int | None = None
    ramp_s: int | None = None
    limit: str | None = None
    serial: str | None = None  # boards a batch ("4" or "25%"): the play's serial
    throttle: int | None = None  # boards measuring at once
    forks: int = 50
    extra_vars: tuple[str, ...] = ()  # KEY=VALUE, as ansible-playbook -e takes them
    wheel: Path | None = None  # what boards without this flashmark install; None: made here


def find_collection(given: Path | None) -> Path:
    """The flashmark.fleet collection: `given`, or the one this package carries."""
    found = given if given is not None else COLLECTION
    if not (found / "galaxy.yml").is_file() or not (found / PLAYBOOK).is_file():
        raise AnsibleMissing(f"{found} is not the flashmark.fleet collection (no {PLAYBOOK})")
    return found.resolve()


def find_ansible_playbook() -> str:
    beside = Path(sys.executable).parent / "ansible-playbook"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("ansible-playbook")
    if found is None:
        raise AnsibleMissing(
            "flashmark fleet needs Ansible's ansible-playbook (the fleet extra): "
            f"{add_extra('fleet')}"
        )
    return found


def check_wheel(path: Path) -> None:
    """--wheel: a flashmark wheel file (PEP 427's name), or a usage error now."""
    if not path.is_file() or not path.name.startswith("flashmark-") or path.suffix != ".whl":
        raise UsageError(f"--wheel: {path} is not a flashmark wheel file (flashmark-*.whl)")


def playbook_variables(
    request: FleetRequest, wheel: Path | None, campaign: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The playbook's variables (collection/roles/benchmark/defaults/main.yml) for this
    request: the campaign, the benchmark, this flashmark's version as every board's and its
    wheel for the boards without it, and the campaign as the service has it (`campaign`: its
    answer, None when it has none yet), so that the playbook need not ask again."""
    variables: dict[str, Any] = {
        "flashmark_campaign": request.campaign,
        "flashmark_server": request.server,
        "flashmark_profile": request.profile,
        "flashmark_version": flashmark.__version__,
        "flashmark_wheel": str(wheel) if wheel else "",
        # As ansible.builtin.uri would register the service's answer (tasks/plan.yml).
        "flashmark_campaign_job": {"status": 404, "json": {}}
        if campaign is None
        else {"status": 200, "json": {"job_hash": campaign["job_hash"], "job": campaign["job"]}},
    }
    optional = {
        "flashmark_size": request.size_bytes,
        "flashmark_runtime": request.runtime_s,
        "flashmark_ramp": request.ramp_s,
        "flashmark_serial": request.serial,
        "flashmark_throttle": request.throttle,
    }
    variables.update({key: value for key, value in optional.items() if value is not None})
    return variables


def run_playbook(
    request: FleetRequest,
    collection: Path,
    log: Path,
    on_event: Callable[[Mapping[str, Any]], None],
    campaign: Mapping[str, Any] | None = None,
) -> int:
    """Run the fleet playbook, calling `on_event` with each callback event as it comes, and
    return ansible-playbook's exit status. Ansible's output is written to `log`. On any
    exception (a signal included) ansible-playbook is stopped and reaped first."""
    program = find_ansible_playbook()
    with tempfile.TemporaryDirectory(prefix="flashmark-fleet-") as work:
        folder = Path(work)
        namespace = folder / "ansible_collections" / "flashmark"
        namespace.mkdir(parents=True)
        (namespace / "fleet").symlink_to(collection, target_is_directory=True)
        variables = folder / "variables.json"
        variables.write_text(
            json.dumps(playbook_variables(request, _wheel(request, folder), campaign))
        )
        events = folder / "events.jsonl"
        events.touch()
        argv = [
            program,
            "--inventory", str(request.inventory),
            "--forks", str(request.forks),
            "--extra-vars", f"@{variables}",
            # The verdict is read here: the playbook's own report play is left out.
            "--skip-tags", "flashmark_report",
        ]  # fmt: skip
        if request.limit:
            argv += ["--limit", request.limit]
        for extra in request.extra_vars:
            argv += ["--extra-vars", extra]
        argv.append(str(collection / PLAYBOOK))
        with log.open("ab") as output:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                env=_environment(folder, events, request.token),
                start_new_session=True,  # its workers and it are stopped as one group
            )
        try:
            return _follow(process, events, on_event)
        except BaseException:
            _stop(process)
            raise


def _wheel(request: FleetRequest, folder: Path) -> Path | None:
    """--wheel, or one made of the running flashmark; None when neither is there (the boards
    that lack flashmark are then refused, with the variable that installs it)."""
    if request.wheel is not None:
        return request.wheel.resolve()
    try:
        return build_running_wheel(folder)
    except EnvironmentProblem:
        return None


def check_inventory(path: Path) -> None:
    if not path.exists():
        raise UsageError(f"no inventory at {path}")


def _environment(folder: Path, events: Path, token: str) -> dict[str, str]:
    environment = dict(os.environ)
    known = environment.get("ANSIBLE_COLLECTIONS_PATH", "")
    enabled = environment.get("ANSIBLE_CALLBACKS_ENABLED", "")
    # ansible-core refuses to start in a locale that is not UTF-8 ("Ansible requires the
    # locale encoding to be UTF-8"), LC_ALL=C for one: C.UTF-8 is every glibc's since 2.35
    # and Debian's long before.
    if locale.getencoding().replace("-", "").lower() != "utf8":
        environment["LC_ALL"] = "C.UTF-8"
    environment.update(
        {
            "ANSIBLE_COLLECTIONS_PATH": ":".join(part for part in (str(folder), known) if part),
            "ANSIBLE_CALLBACKS_ENABLED": ",".join(part for part in (enabled, CALLBACK) if part),
            # One connection a task instead of two and a file copy (the boards run Python
            # modules over ssh): what keeps a fleet's overhead small.
            "ANSIBLE_PIPELINING": "True",
            "ANSIBLE_RETRY_FILES_ENABLED": "False",
            "ANSIBLE_NOCOLOR": "1",
            EVENTS_ENV: str(events),
            TOKEN_ENV: token,
        }
    )
    return environment


def _follow(
    process: subprocess.Popen[bytes],
    events: Path,
    on_event: Callable[[Mapping[str, Any]], None],
) -> int:
    """Hand on each complete line of `events` while `process` runs, then the rest."""
    with events.open("rb") as stream:
        pending = b""
        while True:
            finished = process.poll() is not None
            pending += stream.read()
            *lines, pending = pending.split(b"\n")
            for line in lines:
                with contextlib.suppress(ValueError):
                    event = json.loads(line)
                    if isinstance(event, dict):
                        on_event(event)
            if finished:
                return int(process.returncode)
            time.sleep(POLL_S)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=STOP_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
