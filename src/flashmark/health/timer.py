"""The systemd timer that takes a health reading regularly (`flashmark health --install-timer`,
`--remove-timer`): a service and a timer per target, filled in from the package's unit files
(health/units/), in /etc/systemd/system or $FLASHMARK_UNIT_DIR.

The kernel's write counter starts again at every boot, so a record of a device's writes needs
readings through each boot; a timer takes them without anyone remembering to. Each file says in
its first line who wrote it, so that removing (here, and the Debian package's purge) deletes
only files flashmark wrote. systemctl is asked only where systemd runs and the folder is the
system's own: a folder given for tests is written and nothing else.
"""

from __future__ import annotations

import os
import string
import subprocess
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from flashmark.errors import EnvironmentProblem, UsageError, printable
from flashmark.system.durable_files import replace_file

UNIT_DIR_ENV = "FLASHMARK_UNIT_DIR"
SYSTEM_UNIT_DIR = Path("/etc/systemd/system")
# sd_booted(3): systemd is the running init exactly when this folder exists.
_SYSTEMD_RUNNING = Path("/run/systemd/system")
MARK = "# Written by `flashmark health --install-timer`"
PREFIX = "flashmark-health"
# systemd.time(7) calendar shorthands: a reading a day is what the forecast needs; more often
# only narrows the rate's interval faster.
EVERY = ("hourly", "daily", "weekly", "monthly")
# Word characters systemd's unit-file parser takes as they are in ExecStart (systemd.service(5),
# "Command lines"); anything else is quoted.
_PLAIN = frozenset(string.ascii_letters + string.digits + "/_.:=@+,-")


@dataclass(frozen=True)
class TimerFiles:
    """One target's pair of unit files."""

    name: str  # the units' name without suffix: "flashmark-health", "flashmark-health-mnt-card"
    service: Path
    timer: Path

    @property
    def paths(self) -> tuple[Path, Path]:
        return self.service, self.timer


@dataclass(frozen=True)
class Installed:
    files: TimerFiles
    exec_start: str
    started: bool  # systemctl enabled and started it; False: written only


def unit_folder() -> Path:
    """Where the units go: $FLASHMARK_UNIT_DIR, else /etc/systemd/system."""
    given = os.environ.get(UNIT_DIR_ENV)
    return Path(given) if given else SYSTEM_UNIT_DIR


def timer_files(target: str, folder: Path | None = None) -> TimerFiles:
    """The pair for `target` (an absolute path): "flashmark-health" for /, else the path
    escaped as `systemd-escape --path` does ("flashmark-health-mnt-card")."""
    folder = unit_folder() if folder is None else folder
    escaped = escape_path(target)
    name = PREFIX if escaped == "-" else f"{PREFIX}-{escaped}"
    return TimerFiles(name, folder / f"{name}.service", folder / f"{name}.timer")


def escape_path(path: str) -> str:
    """systemd-escape(1) --path: slashes trimmed and collapsed, each "/" then "-", a character
    other than ASCII letters, digits, ":", "_" and "." (or a leading ".") as \\xNN per byte."""
    parts = [part for part in path.split("/") if part]
    if not parts:
        return "-"
    out = []
    for index, byte in enumerate("/".join(parts).encode()):
        char = chr(byte)
        if char == "/":
            out.append("-")
        elif byte < 128 and (char.isalnum() or char in ":_" or (char == "." and index)):
            out.append(char)
        else:
            out.append(f"\\x{byte:02x}")
    return "".join(out)


def exec_start(target: str, db: Path) -> str:
    """The service's command line: this flashmark (its Python, `-m flashmark`, so the timer
    runs the installation that wrote it), `health --record` into the history `db`."""
    words = [sys.executable, "-m", "flashmark", "health", "--record", "--db", str(db), target]
    return " ".join(_unit_word(word) for word in words)


def _unit_word(word: str) -> str:
    """One word of a unit file's command line: quoted (C escapes) unless plain; "%" and "$"
    doubled, as specifiers and variables would read them."""
    if word and set(word) <= _PLAIN:
        quoted = word
    else:
        inner = "".join(
            "\\\\" if c == "\\" else '\\"' if c == '"' else c if c.isprintable() else _c_escape(c)
            for c in word
        )
        quoted = f'"{inner}"'
    return quoted.replace("%", "%%").replace("$", "$$")


def _c_escape(char: str) -> str:
    return "".join(f"\\x{byte:02x}" for byte in char.encode())


def unit_texts(target: str, every: str, db: Path) -> tuple[str, str]:
    """The service's and the timer's text, from the package's unit files."""
    fields = {
        "target": printable(target).replace("%", "%%"),
        "exec_start": exec_start(target, db),
        "every": every,
    }
    units = resources.files("flashmark.health").joinpath("units")
    return tuple(  # type: ignore[return-value]
        string.Template(units.joinpath(f"{PREFIX}.{suffix}").read_text("utf-8")).substitute(fields)
        for suffix in ("service", "timer")
    )


def systemd_runs(folder: Path) -> bool:
    """Whether systemctl should be asked: systemd is the running init and `folder` is the
    system's unit folder."""
    return folder == SYSTEM_UNIT_DIR and _SYSTEMD_RUNNING.is_dir()


def install_timer(target: str, every: str, db: Path) -> Installed:
    """Write the pair for `target` (replacing a pair flashmark wrote before: another --every)
    and, where systemd runs, enable and start the timer."""
    if every not in EVERY:
        raise UsageError(f"--every {every}: choose one of {', '.join(EVERY)}")
    files = timer_files(target)
    folder = files.service.parent
    for path in files.paths:
        if path.exists() and not written_by_flashmark(path):
            raise UsageError(
                f"{printable(str(path))} exists and was not written by flashmark: it is left "
                "alone; remove or rename it first"
            )
    command = exec_start(target, db)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for path, text in zip(files.paths, unit_texts(target, every, db), strict=True):
            replace_file(path, text.encode(), 0o644)  # a unit half written would be read
    except OSError as error:
        raise _cannot(folder, "write the timer", error) from None
    started = systemd_runs(folder)
    if started:
        _systemctl("daemon-reload")
        _systemctl("enable", "--now", files.timer.name)
    return Installed(files, command, started)


def remove_timer(target: str) -> TimerFiles:
    """Stop and disable the timer of `target` where systemd runs, and delete the files
    flashmark wrote for it (and the link `systemctl enable` made); UsageError, naming those
    installed, when there are none."""
    files = timer_files(target)
    folder = files.service.parent
    ours = [path for path in files.paths if written_by_flashmark(path)]
    if not ours:
        installed = ", ".join(sorted(p.name for p in installed_timers(folder))) or "none"
        raise UsageError(
            f"no flashmark health timer of {printable(target)} in {printable(str(folder))} "
            f"(installed there: {installed})"
        )
    running = systemd_runs(folder)
    if running and files.timer in ours:
        _systemctl("disable", "--now", files.timer.name)
    try:
        enabled = folder / "timers.target.wants" / files.timer.name
        if enabled.is_symlink():
            enabled.unlink()
        for path in ours:
            path.unlink()
    except OSError as error:
        raise _cannot(folder, "remove the timer", error) from None
    if running:
        _systemctl("daemon-reload")
    return files


def installed_timers(folder: Path) -> list[Path]:
    """The timers flashmark wrote in `folder`."""
    return [path for path in folder.glob(f"{PREFIX}*.timer") if written_by_flashmark(path)]


def written_by_flashmark(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8", errors="replace") as unit:
            return unit.readline().startswith(MARK)
    except OSError:
        return False


def _systemctl(*arguments: str) -> None:
    done = subprocess.run(["systemctl", *arguments], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise EnvironmentProblem(
            f"systemctl {' '.join(arguments)} failed: {said[-1] if said else done.returncode}"
        )


def _cannot(folder: Path, what: str, error: OSError) -> EnvironmentProblem:
    root = " (run it as root: sudo)" if os.geteuid() != 0 else ""
    return EnvironmentProblem(
        f"cannot {what} in {printable(str(folder))}: {error.strerror}{root}; "
        f"{UNIT_DIR_ENV} chooses another folder"
    )
