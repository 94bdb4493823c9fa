"""A throwaway OpenSSH server on a free localhost port: its own host key, one authorized key,
and `flashmark` on its sessions' PATH (this tree's, through a wrapper). The client side is
FLASHMARK_SSH, the ssh command flashmark runs (flashmark.powercut.remote)."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SSHD = shutil.which("sshd") or ("/usr/sbin/sshd" if Path("/usr/sbin/sshd").exists() else None)
UNAVAILABLE = (
    "needs OpenSSH's sshd and ssh-keygen (Debian's openssh-server; install.sh --dev installs it)"
    if SSHD is None or shutil.which("ssh-keygen") is None or shutil.which("ssh") is None
    else None
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class Sshd:
    port: int
    folder: Path
    ssh_command: str  # FLASHMARK_SSH for a client this server lets in
    state: Path  # XDG_STATE_HOME of the server's sessions: the recorder keeps its runs there

    @property
    def runs(self) -> Path:
        return self.state / "flashmark" / "powercut-recorder"

    def env(self) -> dict[str, str]:
        return {"FLASHMARK_SSH": self.ssh_command}

    @contextlib.contextmanager
    def running(self) -> Iterator[subprocess.Popen[bytes]]:
        """sshd in the foreground (-D), stopped at the end; sessions it started end with
        their connections."""
        assert SSHD is not None
        process = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(self.folder / "sshd_config")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        try:
            _wait_for_port(self.port, process)
            yield process
        finally:
            process.terminate()
            process.wait(timeout=10)
            if process.stderr is not None:
                process.stderr.close()


def make_sshd(folder: Path, *, forced: str | None = None) -> Sshd:
    """Keys and configuration in `folder` (not started: `Sshd.running`); `forced`: the client
    key may run only that command (authorized_keys `restrict,command=`), found on the
    sessions' PATH."""
    if UNAVAILABLE is not None:
        pytest.skip(UNAVAILABLE)
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("host_key", "client_key"):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(folder / name)],
            check=True, capture_output=True,
        )  # fmt: skip
    options = "" if forced is None else f'restrict,command="{forced}" '
    (folder / "authorized_keys").write_text(options + (folder / "client_key.pub").read_text())
    port = free_port()
    host_key = (folder / "host_key.pub").read_text().split()
    (folder / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_key[0]} {host_key[1]}\n")
    bin_folder = folder / "bin"
    bin_folder.mkdir()
    wrapper = bin_folder / "flashmark"
    source = os.pathsep.join(path for path in sys.path if path)
    wrapper.write_text(
        "#!/bin/sh\n"
        f'PYTHONPATH={shlex.quote(source)} exec {shlex.quote(sys.executable)} -m flashmark "$@"\n'
    )
    wrapper.chmod(0o755)
    state = folder / "state"
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation
    (folder / "sshd_config").write_text(
        f"ListenAddress 127.0.0.1\nPort {port}\nHostKey {folder / 'host_key'}\n"
        f"AuthorizedKeysFile {folder / 'authorized_keys'}\nPidFile none\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        "StrictModes no\nPermitRootLogin prohibit-password\n"
        f"SetEnv PATH={bin_folder}:/usr/bin:/bin XDG_STATE_HOME={state}\n"
    )
    ssh = (
        f"ssh -F none -p {port} -i {folder / 'client_key'} -o IdentitiesOnly=yes "
        f"-o UserKnownHostsFile={folder / 'known_hosts'} -o StrictHostKeyChecking=yes"
    )
    return Sshd(port, folder, ssh, state)


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            assert process.stderr is not None
            raise RuntimeError(f"sshd exited: {process.stderr.read().decode(errors='replace')}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"sshd did not listen on port {port} within 10 s")

