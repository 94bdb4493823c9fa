"""`flashmark fleet run`'s refusals before any board is touched: bad input (exit 2), no Ansible
(exit 3, saying how to get it), a service that does not answer (exit 1)."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

import flashmark as flashmark_package
from flashmark.install_hint import add_extra
from tests.cli_runner import flashmark


@pytest.fixture
def inventory(tmp_path: Path) -> Path:
    path = tmp_path / "boards.yml"
    path.write_text("all:\n  hosts:\n    board-01: {ansible_connection: local}\n")
    return path


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port  # closed again: nothing listens there


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--campaign", "a/b", "--server", "http://x"), "--campaign: a campaign name is 1 to 64"),
        (("--campaign", "lab", "--server", "ftp://x"), "--server must be an http:// or https://"),
        (("--campaign", "lab", "--server", "http://x", "--token", ""), "uploading needs a token"),
    ],
)
def test_bad_input_is_refused_in_one_line(inventory, options, message):
    done = flashmark("fleet", "run", inventory, *options, env={"FLASHMARK_TOKEN": "fmk_x"})
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"flashmark: error: {message}"), done.stderr


def test_a_missing_inventory_is_refused(tmp_path):
    done = flashmark(
        "fleet", "run", tmp_path / "none.yml", "--campaign", "lab", "--server", "http://x",
        env={"FLASHMARK_TOKEN": "fmk_x"},
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == f"flashmark: error: no inventory at {tmp_path / 'none.yml'}"


def test_without_ansible_it_says_how_to_get_it(inventory, monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))  # nothing beside it
    done = flashmark(
        "fleet", "run", inventory, "--campaign", "lab", "--server", "http://x",
        env={"FLASHMARK_TOKEN": "fmk_x", "PATH": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 3
    # The command that adds the fleet extra to this installation (tests/test_install_hint.py).
    assert done.stderr.strip() == (
        "flashmark: error: flashmark fleet needs Ansible's ansible-playbook (the fleet extra): "
        f"{add_extra('fleet')}"
    )


def test_the_collection_is_the_one_this_flashmark_carries():
    done = flashmark("fleet", "collection")
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.strip())
    assert folder == Path(flashmark_package.__file__).resolve().parent / "fleet" / "collection"
    assert (folder / "galaxy.yml").is_file() and (folder / "playbooks" / "fleet.yml").is_file()


@pytest.mark.parametrize("name", ["none.whl", "flashmark-0.1.0.tar.gz"])
def test_a_wheel_that_is_not_one_is_refused(inventory, tmp_path, name):
    (tmp_path / "flashmark-0.1.0.tar.gz").write_bytes(b"")
    done = flashmark(
        "fleet", "run", inventory, "--campaign", "lab", "--server", "http://x",
        "--wheel", tmp_path / name, env={"FLASHMARK_TOKEN": "fmk_x"},
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"flashmark: error: --wheel: {tmp_path / name} is not a flashmark wheel file "
        "(flashmark-*.whl)"
    )


@pytest.mark.ansible
def test_a_service_that_does_not_answer_stops_it_before_any_board(inventory, tmp_path):
    url = f"http://127.0.0.1:{closed_port()}"
    log = tmp_path / "ansible.log"
    done = flashmark(
        "fleet", "run", inventory, "--campaign", "lab", "--server", url, "--log", log,
        env={"FLASHMARK_TOKEN": "fmk_x"},
    )  # fmt: skip
    assert done.returncode == 9  # the service (README, "Exit codes")
    assert done.stderr.startswith(f"flashmark: error: cannot reach {url}: ")
    assert not log.exists()  # Ansible never started
