"""Shared fixtures: recorded inputs, and skips that say why a machine cannot run a test."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import flashmark.probe.target
from flashmark.bench.disturbance import WAIT_BUDGET_ENV
from flashmark.health.timer import UNIT_DIR_ENV
from flashmark.system.lock_files import LOCK_DIR_ENV
from tests.emulation.flash.device import EmulatedFlash
from tests.emulation.flash.model import FlashModel

DATA = Path(__file__).resolve().parent / "data"
FIO_RECORDINGS = DATA / "fio"
SHORT_LOAD_SAMPLE_S = 0.02


def fio_missing_reason() -> str | None:
    return None if shutil.which("fio") else "fio is not installed (apt-get install fio)"


def emulation_missing_reason() -> str | None:
    from tests.emulation.throttle import unavailable_reason

    return fio_missing_reason() or unavailable_reason()


def ansible_missing_reason() -> str | None:
    beside = Path(sys.executable).parent / "ansible-playbook"
    if beside.is_file() or shutil.which("ansible-playbook"):
        return None
    from flashmark.install_hint import add_extra

    return f"Ansible's ansible-playbook is not installed (the fleet extra: {add_extra('fleet')})"


def flash_missing_reason() -> str | None:
    from tests.emulation.flash.device import unavailable_reason

    return unavailable_reason()


def pytest_configure(config: pytest.Config) -> None:
    """SIGTERM (a CI timeout, `kill`) ends the run like Ctrl-C: pytest then runs the teardown of
    every active fixture, so emulated devices, FUSE mounts and blkio cgroups are removed instead
    of left behind by a process that died at once (SIGTERM's default action)."""
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _interrupt_on_sigterm)
    # A suite started in the background by a non-interactive shell (`pytest ... &`) inherits
    # SIGINT ignored (POSIX Shell Command Language 2.11: an asynchronous list without job
    # control), and an ignored signal stays ignored across exec. flashmark keeps an ignored
    # SIGINT ignored, as it should, so every test that sends SIGINT, in-process or to a process
    # it starts, would wait in vain: give the suite Python's usual Ctrl-C handler instead.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_itemcollected(item: pytest.Item) -> None:
    """The tests of a module run in one worker, one after another: a module's fixtures (an
    emulated device measured once, a built wheel) are then made once. The fault tier is one
    group: its session fixture runs every selected case together, on one lab. A module that
    names its group itself (xdist_group) keeps it: the accuracy tests of the emulated devices
    share one, so that two of them never run at the same time. Marked as each test is
    collected, before any pytest_collection_modifyitems: xdist reads the marks in its own."""
    if item.get_closest_marker("xdist_group") is None:
        group = "faults" if item.get_closest_marker("faults") else item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(group))


def _interrupt_on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum} (SIGTERM): stopping and removing test devices")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip marked tests with the reason the machine cannot run them (never silently)."""
    fio_reason = fio_missing_reason()
    root_reason = emulation_missing_reason()
    # Checking for nbdkit's Python plugin starts nbdkit: only when a flash test was collected.
    wants_flash = any(item.get_closest_marker("flash") for item in items)
    flash_reason = flash_missing_reason() if wants_flash else None
    ansible_reason = ansible_missing_reason()
    in_ci = os.environ.get("CI") == "true"
    for item in items:
        if in_ci:
            continue  # CI is root with fio and loop devices: a skip there would hide a failure
        if item.get_closest_marker("flash") and flash_reason:
            item.add_marker(pytest.mark.skip(reason=flash_reason))
        elif "root" in item.keywords and root_reason:
            item.add_marker(pytest.mark.skip(reason=root_reason))
        elif "fio" in item.keywords and fio_reason:
            item.add_marker(pytest.mark.skip(reason=fio_reason))
        elif "ansible" in item.keywords and ansible_reason:
            item.add_marker(pytest.mark.skip(reason=ansible_reason))


@pytest.fixture(autouse=True)
def private_history(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test saves into a history of its own, never the user's, and keeps its state
    (recovery files, capacity backups) in a folder of its own (subprocesses inherit both)."""
    path = tmp_path_factory.mktemp("history") / "history.sqlite3"
    monkeypatch.setenv("FLASHMARK_DB", str(path))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
    return path


@pytest.fixture(scope="session", autouse=True)
def session_locks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Device locks of this test session's own, for what runs before a test's own folder
    (module-scoped fixtures that measure): never the machine's /run/lock/flashmark."""
    folder = tmp_path_factory.mktemp("session-locks")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(LOCK_DIR_ENV, str(folder))
        yield folder


@pytest.fixture(scope="session", autouse=True)
def no_waits_for_a_quiet_host() -> Iterator[None]:
    """A run waits for a quiet device and unsaturated CPUs before measuring a disturbed test
    again, up to a minute a run (flashmark.bench.disturbance); the suite's own load saturates
    the CPUs, so every run of the suite waited in vain for most of that minute. The tests that
    judge no measured figure against a truth do not wait (their runs, in this process and in
    the processes they start, measure on at once); those that do keep the wait
    (`waits_for_a_quiet_host`)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(WAIT_BUDGET_ENV, "0")
        yield


@pytest.fixture(scope="module", autouse=True)
def waits_for_a_quiet_host(request: pytest.FixtureRequest) -> Iterator[None]:
    """The rate tests of the emulated devices (group device-timing, tests.emulation.runs),
    whose figures are judged against the devices' truth, and the tests of the disturbance
    check itself: their runs wait for quiet as flashmark does, so that a test disturbed by
    the host is measured again."""
    group = request.node.get_closest_marker("xdist_group")
    if group is None or group.args[:1] != ("device-timing",):
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(WAIT_BUDGET_ENV, raising=False)
        yield


@pytest.fixture(autouse=True)
def private_locks(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test takes flashmark's device locks in a lock folder of its own: its runs and the
    holders it starts exclude each other as on a machine, but two test sessions at once, whose
    folders share the disk of /tmp, do not refuse each other's runs."""
    folder = tmp_path_factory.mktemp("locks")
    monkeypatch.setenv(LOCK_DIR_ENV, str(folder))
    return folder


@pytest.fixture(autouse=True)
def private_units(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test installs systemd units (`health --install-timer`) into a folder of its own,
    where systemctl is never asked: never the machine's /etc/systemd/system."""
    folder = tmp_path_factory.mktemp("units")
    monkeypatch.setenv(UNIT_DIR_ENV, str(folder))
    return folder


@pytest.fixture(autouse=True)
def short_load_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    """A live probe watches the host's load for LIVE_SAMPLE_S (0.5 s) before every run; in-process
    it is 20 ms: still a real window that is measured and reported (no test reads its figures),
    and half a second less for each of the suite's runs. Subprocesses keep the product's 0.5 s."""
    monkeypatch.setattr(flashmark.probe.target, "LIVE_SAMPLE_S", SHORT_LOAD_SAMPLE_S)


@pytest.fixture
def recordings() -> Path:
    return FIO_RECORDINGS


@pytest.fixture
def emulated_flash() -> Iterator[Callable[..., EmulatedFlash]]:
    """Factory of emulated flash devices: `emulated_flash(FlashModel(...), caps=...)`.

    Each device is entered at once and removed at teardown (loop device, FUSE mount, nbdkit),
    also when the test fails or is interrupted. Mark the test `flash` (and `fio` if it runs fio).
    """
    with contextlib.ExitStack() as stack:

        def make(model: FlashModel, **options: Any) -> EmulatedFlash:
            return stack.enter_context(EmulatedFlash(model, **options))

        yield make
