"""install.sh as a user runs it, in a mount namespace of its own (unshare -m) where /opt and
/usr/local/bin are empty folders of the test, so the machine's own /opt/flashmark and its link
are never touched: the core install, `flashmark serve` refused with the command that adds the
server extra, that command run as printed (install.sh --with server), and `flashmark serve`
answering then. Needs root (mounts) and PyPI (the dependencies)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.release.test_wheel import LEFT_OUT, REPOSITORY, free_port, pypi_unreachable_reason

pytestmark = [pytest.mark.wheel, pytest.mark.root]
# The user's session inside the namespace: the install, the refusal, the hint run as printed,
# the service started, asked for / and stopped. Each step's output is kept in a file.
SESSION = r"""
set -u
mount --bind "$1/opt" /opt
mount -t tmpfs flashmark-test /usr/local/bin
cd "$1/home"
"$2/install.sh" > install.txt 2>&1 || exit 10
flashmark serve --host 127.0.0.1 --port "$3" > /dev/null 2> refused.txt
echo $? > refused.status
sed 's/.*is missing): //' refused.txt > hint.txt
sh -c "$(cat hint.txt)" > added.txt 2>&1 || exit 11
flashmark serve --host 127.0.0.1 --port "$3" > serve.txt 2>&1 &
server=$!
/usr/bin/python3 - "$3" > answer.txt 2>&1 <<'PY'
import sys, time, urllib.request
deadline = time.monotonic() + 60
while True:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/", timeout=2) as answer:
            print(answer.status)
            break
    except OSError as error:
        if time.monotonic() > deadline:
            print(error)
            break
        time.sleep(0.2)
PY
kill "$server"
wait "$server"
exit 0
"""


def test_install_sh_s_hint_run_as_printed_adds_the_server(tmp_path: Path):
    reason = pypi_unreachable_reason()
    if reason:
        pytest.skip(reason)
    if shutil.which("unshare") is None:
        pytest.skip("no unshare (util-linux): the install needs a mount namespace of its own")
    source = tmp_path / "flashmark source"
    shutil.copytree(REPOSITORY, source, ignore=LEFT_OUT)
    for folder in ("opt", "home"):
        (tmp_path / folder).mkdir()
    environment = {
        "PATH": "/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": str(tmp_path / "home"),
        "LC_ALL": "C.UTF-8",
    }
    machine_marker = Path("/opt/flashmark/flashmark-install-source")
    machine_before = machine_marker.read_bytes() if machine_marker.exists() else None
    done = subprocess.run(
        ["unshare", "--mount", "sh", "-c", SESSION, "session", str(tmp_path), str(source),
         str(free_port())],
        capture_output=True, text=True, timeout=300, env=environment,
    )  # fmt: skip
    home = tmp_path / "home"

    def kept(name: str) -> str:
        path = home / name
        return path.read_text().strip() if path.exists() else ""

    assert done.returncode == 0, (
        done.returncode,
        done.stderr,
        kept("install.txt"),
        kept("added.txt"),
    )
    assert kept("refused.status") == "3"
    assert kept("refused.txt") == (
        "flashmark: error: `flashmark serve` needs the server extra (uvicorn is missing): "
        f"'{source}/install.sh' --with server"
    )
    assert kept("answer.txt") == "200", kept("serve.txt")
    # install.sh's venv went where the namespace put /opt, and nowhere else.
    assert (tmp_path / "opt" / "flashmark" / "flashmark-install-source").read_text().strip() == (
        str(source)
    )
    # The machine's own install (the README's, if any) is as it was.
    assert (machine_marker.read_bytes() if machine_marker.exists() else None) == machine_before
