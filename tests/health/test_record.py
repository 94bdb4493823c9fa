"""`flashmark health --record` (a reading for the record: one line, and a wait while a run holds
the device's lock) and its systemd timer (`--install-timer`, `--remove-timer`), on the recorded
eMMC tree for the reading and this machine's own lock files for the wait."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flashmark.health.kind import HEALTH
from flashmark.health.timer import escape_path, timer_files
from flashmark.history.store import History
from flashmark.system.target_lock import TargetBusy, held_path, measured_by
from tests.cli_runner import flashmark
from tests.health.test_health_check import EMMC_DEVICE, recorded_env
from tests.probe.recorded import copied_tree

# A process holding the device lock of the folder in argv[1] as a run does (the project's own
# lock API), for argv[2] seconds (0: until killed); it says when it holds it and when it lets go.
HOLDER = """
import sys, time
from flashmark.system.target_lock import held_path
with held_path(sys.argv[1]):
    print("held", flush=True)
    seconds = float(sys.argv[2])
    time.sleep(seconds if seconds else 3600)
    print(f"released {time.time()!r}", flush=True)
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return recorded_env("emmc_wear", tmp_path / "history.db")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder on this machine's disk: its device is what the holder and the reading lock."""
    made = tmp_path / "card"
    made.mkdir()
    return made


def saved(env: dict[str, str]) -> list[int]:
    return [entry.id for entry in History(Path(env["FLASHMARK_DB"])).list(kind=HEALTH.name)]


def hold(folder: Path, seconds: float) -> Iterator[subprocess.Popen[str]]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        yield holder
    finally:
        holder.kill()
        holder.wait()


def test_record_keeps_a_reading_and_prints_its_verdict_line_alone(env, folder):
    done = flashmark("health", "--record", folder, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "verdict: unknown: no write rate to forecast from yet; saved as #1"
    ]
    assert done.stderr == ""
    again = flashmark("health", "--record", folder, env=env)
    assert again.stdout.endswith("saved as #2\n")
    assert saved(env) == [2, 1]


def test_record_of_a_worn_out_device_says_it_in_its_one_line(env, folder, tmp_path):
    tree = copied_tree("emmc_wear", tmp_path / "tree")
    (tree / "sys" / EMMC_DEVICE / "life_time").write_text("0x0b 0x0a\n")
    done = flashmark(
        "health", "--record", folder, env={**env, "FLASHMARK_SYSFS_ROOT": str(tree / "sys")}
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "verdict: replace it: life time estimate A exceeded; saved as #1"
    ]
    assert done.stderr == ""  # the warning a plain reading adds is the same alarm


def test_record_refuses_no_save(env, folder):
    done = flashmark("health", "--record", "--no-save", folder, env=env)
    assert done.returncode == 2
    assert "--record keeps the reading" in done.stderr


def test_record_waits_while_a_run_holds_the_device_then_reads(env, folder):
    hold_s = 2.0
    for holder in hold(folder, hold_s):
        started = time.time()
        done = flashmark("health", "--record", folder, "--wait", "1", env=env)
        finished = time.time()
        assert holder.stdout is not None
        released = float(holder.stdout.readline().split()[1])
    assert done.returncode == 0, done.stderr
    assert finished - started >= hold_s - 0.5
    assert finished >= released  # not one reading before the run let go
    assert f"is being measured by another flashmark (pid {holder.pid}" in done.stderr
    assert done.stderr.rstrip().endswith("waiting for it to end")
    assert done.stdout.splitlines() == [
        "verdict: unknown: no write rate to forecast from yet; saved as #1"
    ]


def test_record_gives_up_after_the_wait_and_keeps_nothing(env, folder):
    for holder in hold(folder, 0):
        started = time.monotonic()
        done = flashmark("health", "--record", folder, "--wait", "0.02", env=env)
        elapsed = time.monotonic() - started
        assert holder.poll() is None  # still holding when the reading gave up
    assert done.returncode == 4
    assert 1.2 <= elapsed < 10
    assert (
        f"is still being measured by another flashmark (pid {holder.pid}" in done.stderr
        and "after 1.2 seconds: no reading taken" in done.stderr
    )
    assert done.stdout == ""
    assert saved(env) == []


# A process looking, as --record does, whether the folder in argv[1] is being measured, again
# and again for argv[2] seconds; it prints how many looks it made.
LOOKER = """
import sys, time
from flashmark.system.target_lock import wait_while_measured
looks, end = 0, time.monotonic() + float(sys.argv[2])
print("looking", flush=True)
while time.monotonic() < end:
    wait_while_measured(sys.argv[1], 60, lambda line: None, poll_s=0.0005)
    looks += 1
print(looks, flush=True)
"""


@pytest.fixture
def ram_folder() -> Iterator[Path]:
    """A folder on /dev/shm: a RAM filesystem's device is found in a tenth of a disk's time, so
    looks and holds come often enough for a look's instant to meet a run's start many times."""
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm here")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as made:
        yield Path(made)


def test_a_record_looking_never_refuses_a_run_starting(ram_folder):
    folder = ram_folder
    looker = subprocess.Popen(
        [sys.executable, "-c", LOOKER, str(folder), "2"], stdout=subprocess.PIPE, text=True
    )
    assert looker.stdout is not None and looker.stdout.readline() == "looking\n"
    refused = starts = 0
    try:
        while looker.poll() is None:
            try:
                with held_path(str(folder)):  # a run's hold, from its first write to its last
                    starts += 1
            except TargetBusy:
                refused += 1
    finally:
        looker.kill()
        remaining, _ = looker.communicate()
    assert looker.returncode == 0
    assert int(remaining) > 100 and starts > 100  # both kept at it the whole time
    assert refused == 0


def test_measured_by_names_the_holder_and_nothing_once_it_ends(folder, tmp_path):
    assert measured_by(str(folder)) is None
    for holder in hold(folder, 0):
        measurer = measured_by(str(folder))
        assert measurer is not None and measurer.pid == holder.pid
        assert str(measurer) == f"flashmark (pid {holder.pid})"
    assert measured_by(str(folder)) is None
    assert measured_by(str(tmp_path / "gone")) is None


@pytest.mark.parametrize(
    ("tree", "asked"),
    [
        ("sd_sandisk_industrial", "SanDisk health, CMD56 read 0x00000001"),
        ("usb_ssd_sat_smart", "smartctl -d sat"),
        ("nvme_pcie", "nvme smart-log"),
    ],
)
def test_a_reading_while_a_run_measures_the_device_asks_it_nothing(folder, tmp_path, tree, asked):
    env = recorded_env(tree, tmp_path / "history.db")
    free = json.loads(flashmark("health", folder, "--json", "--no-save", env=env).stdout)
    assert asked in free["health"]["sources"]  # what the device answers when it is free
    for holder in hold(folder, 0):
        done = flashmark("health", folder, "--json", "--no-save", env=env)  # not waiting
        said = f"device commands not sent: flashmark (pid {holder.pid}) is measuring it"
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert asked not in document["health"]["sources"]
    assert document["skipped"] == [said]  # said once, whichever commands it kept back


# -- the timer ----------------------------------------------------------------------------------


def unit_value(text: str, key: str) -> str:
    return next(line.split("=", 1)[1] for line in text.splitlines() if line.startswith(key + "="))


def test_install_writes_a_service_and_timer_that_run_this_flashmark(env, folder, private_units):
    done = flashmark("health", "--install-timer", folder, "--every", "weekly", env=env)
    assert done.returncode == 0, done.stderr
    files = timer_files(str(folder), private_units)
    assert sorted(p.name for p in private_units.iterdir()) == sorted(p.name for p in files.paths)
    service, timer = (path.read_text() for path in files.paths)
    command = unit_value(service, "ExecStart")
    assert shlex.split(command) == [
        sys.executable, "-m", "flashmark", "health", "--record", "--db",
        str(Path(env["FLASHMARK_DB"]).resolve()), str(folder),
    ]  # fmt: skip
    assert unit_value(service, "Type") == "oneshot"
    assert unit_value(timer, "OnCalendar") == "weekly"
    assert unit_value(timer, "WantedBy") == "timers.target"
    assert f"{shlex.quote(files.timer.name)}` starts it" in done.stdout  # systemd not asked
    # The service's command, run as systemd would run it, keeps a reading.
    run = subprocess.run(
        shlex.split(command), env={**os.environ, **env}, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.endswith("saved as #1\n")


def test_install_again_replaces_its_own_pair_and_remove_deletes_exactly_it(
    env, folder, private_units
):
    assert flashmark("health", "--install-timer", folder, env=env).returncode == 0
    assert flashmark("health", "--install-timer", "/", env=env).returncode == 0
    files = timer_files(str(folder), private_units)
    assert unit_value(files.timer.read_text(), "OnCalendar") == "daily"
    assert (
        flashmark("health", "--install-timer", folder, "--every", "hourly", env=env).returncode == 0
    )
    assert unit_value(files.timer.read_text(), "OnCalendar") == "hourly"
    foreign = private_units / "unrelated.service"
    foreign.write_text("[Service]\nExecStart=/bin/true\n")
    wants = private_units / "timers.target.wants"
    wants.mkdir()
    (wants / files.timer.name).symlink_to(files.timer)  # as `systemctl enable` links it
    before = {p.name for p in private_units.iterdir()}
    done = flashmark("health", "--remove-timer", folder, env=env)
    assert done.returncode == 0, done.stderr
    assert before - {p.name for p in private_units.iterdir()} == {p.name for p in files.paths}
    assert list(wants.iterdir()) == []
    assert foreign.exists() and timer_files("/", private_units).timer.exists()
    again = flashmark("health", "--remove-timer", folder, env=env)
    assert again.returncode == 2
    assert "installed there: flashmark-health.timer" in again.stderr


def test_install_leaves_a_unit_it_did_not_write_alone(env, folder, private_units):
    files = timer_files(str(folder), private_units)
    files.timer.write_text("[Timer]\nOnCalendar=daily\n")
    done = flashmark("health", "--install-timer", folder, env=env)
    assert done.returncode == 2
    assert "was not written by flashmark" in done.stderr
    assert files.timer.read_text() == "[Timer]\nOnCalendar=daily\n"
    assert not files.service.exists()
    assert flashmark("health", "--remove-timer", folder, env=env).returncode == 2
    assert files.timer.exists()


def test_install_refuses_a_missing_target_and_options_a_timer_does_not_take(
    env, tmp_path, folder, private_units
):
    missing = flashmark("health", "--install-timer", tmp_path / "gone", env=env)
    assert missing.returncode == 4 and "no such file or folder" in missing.stderr
    mixed = flashmark("health", "--install-timer", "--record", folder, env=env)
    assert mixed.returncode == 2 and "go alone" in mixed.stderr
    assert list(private_units.iterdir()) == []


@pytest.mark.parametrize("name", ["rec-probe", ".hidden dir", 'ü 100% $HOME "q" \\ x'])
def test_unit_names_and_commands_read_as_systemd_reads_them(name, env, tmp_path, private_units):
    target = tmp_path / name
    target.mkdir()
    done = flashmark("health", "--install-timer", target, env=env)
    assert done.returncode == 0, done.stderr
    files = timer_files(str(target), private_units)
    command = unit_value(files.service.read_text(), "ExecStart")
    # systemd's specifiers and variables doubled; its quotes as a shell's double quotes
    assert shlex.split(command.replace("%%", "%").replace("$$", "$"))[-1] == str(target)
    escape = shutil.which("systemd-escape")
    if escape:
        expected = subprocess.run(
            [escape, "--path", str(target)], capture_output=True, text=True, check=True
        ).stdout.strip()
        assert escape_path(str(target)) == expected
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed: the units' syntax is not checked")
    # `systemd-analyze verify` parses the units as systemd would, and checks that ExecStart's
    # program exists, without a running systemd.
    verified = subprocess.run([analyze, "verify", str(files.timer)], capture_output=True, text=True)
    assert verified.returncode == 0, verified.stderr
    assert "Unknown" not in verified.stderr and "Ignoring" not in verified.stderr


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--wait", "5"], "--wait goes with --record"),
        (["--install-timer", "--wait", "5"], "--wait goes with --record"),
        (["--every", "weekly"], "--every goes with --install-timer"),
        (["--record", "--every", "hourly"], "--every goes with --install-timer"),
        (["--remove-timer", "--every", "daily"], "--every goes with --install-timer"),
    ],
)
def test_an_option_without_the_one_it_goes_with_is_refused(
    env, folder, private_units, options, said
):
    done = flashmark("health", folder, *options, env=env)
    assert done.returncode == 2
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert saved(env) == [] and list(private_units.iterdir()) == []
