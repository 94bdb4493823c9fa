"""A fleet on this machine: `flashmark fleet run` against boards of known speed, and what it costs.

    sudo python3 benchmarks/fleet.py [--runtime S] [--size SIZE] [--sqlite]

Six boards, each an Ansible host with a local connection and its own emulated card (a throttled
loop device: tests.emulation.throttle), history and label (tests/fleet/lab.py): three
cards at 800 read / 400 write IOPS, one slow card (200 write IOPS), one whose file system is
shut down when fio starts rand-read-4k (a card failing mid-run), and one board whose fio
reports another version (refused: its job hash differs). The service is a real `flashmark
serve` on a throwaway PostgreSQL (or an SQLite file with --sqlite).

Prints:
- the campaign: every board's card truth, its measured random 4K IOPS and their error, and
  what the campaign says of it (outlier and why, incomplete, refused);
- the outliers flagged against the truth (the slow card, and no other);
- the failing board as the fleet reported it;
- time: the fleet run's wall time against the slowest single run of the same cards on this
  machine, one after another (`flashmark run` alone; and `run` then `upload`, what each board
  does), and the coordination overhead (target <= 10% of the slowest single run).

Needs root, fio, Ansible (the fleet extra: ./install.sh --with fleet) and PostgreSQL's
binaries. A script, not a test: tests/fleet asserts. It runs this tree's flashmark; with
FLASHMARK_LAB_PYTHON=VENV/bin/python, the flashmark installed in that venv (the built wheel with
its fleet and server extras), as a user has it (tests/fleet/lab.py).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests package

from tests.fleet.conftest import BOARDS
from tests.fleet.lab import FleetLab, LabBoard
from tests.server.throwaway_pg import ThrowawayPostgres, missing_reason

CAMPAIGN = "bench"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runtime", type=int, default=10, help="seconds a test (run --runtime)")
    parser.add_argument("--ramp", type=int, default=1, help="run --ramp")
    parser.add_argument("--size", default="16M", help="test area (run --size)")
    parser.add_argument("--sqlite", action="store_true", help="the service on SQLite")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("fleet: needs root (emulated cards: loop devices and the block throttle)")
        return 2
    benchmark = (
        "--profile", "quick", "--size", args.size,
        "--runtime", str(args.runtime), "--ramp", str(args.ramp),
    )  # fmt: skip
    postgres = None
    if not args.sqlite:
        if reason := missing_reason():
            print(f"fleet: {reason} (or --sqlite)")
            return 2
        postgres = ThrowawayPostgres(["fsync=off", "synchronous_commit=off"]).__enter__()
    try:
        with FleetLab(BOARDS, postgres) as lab:
            return run(lab, benchmark)
    finally:
        if postgres is not None:
            postgres.__exit__(None, None, None)


def run(lab: FleetLab, benchmark: tuple[str, ...]) -> int:
    print(f"fleet: {len(BOARDS)} boards, quick profile, {' '.join(benchmark[2:])}", flush=True)
    print(f"load average before: {os.getloadavg()[0]:.1f}", flush=True)
    started = time.monotonic()
    fleet = lab.fleet(CAMPAIGN, *benchmark, timeout=3600)
    first_s = time.monotonic() - started
    campaign = lab.get(f"/api/v1/campaigns/{CAMPAIGN}")
    on_service = {board["label"]: board for board in campaign["boards"]}
    lines = {line.split()[0]: line for line in fleet.stdout.splitlines() if line.strip()}

    print("\n## The campaign: boards x known speeds\n")
    print("| board | card truth: read / write IOPS | random 4K read IOPS | error | "
          "random 4K write IOPS | error | campaign says |")  # fmt: skip
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |")
    truth_flagged = []
    for board in BOARDS:
        caps = board.caps
        shown = on_service.get(board.label)
        truth = f"{caps.read_iops} / {caps.write_iops}"
        if board.fails_at:
            truth += f" (fails at {board.fails_at})"
        if board.fio_version:
            truth += f" ({board.fio_version})"
        if shown is None:
            state = lines.get(board.label, board.label).split(None, 2)[1:]
            print(f"| {board.label} | {truth} | | | | | {' '.join(state)[:160]} |")
            continue
        read = shown["figures"]["rand_read_4k_iops"]["value"]
        write = shown["figures"]["rand_write_4k_iops"]["value"]
        says = "outlier: " + "; ".join(shown["reasons"]) if shown["outlier"] else shown["status"]
        if shown["outlier"]:
            truth_flagged.append(board.label)
        print(
            f"| {board.label} | {truth} | {_figure(read)} | {_error(read, caps.read_iops)} | "
            f"{_figure(write)} | {_error(write, caps.write_iops)} | {says} |"
        )
    slow = [b.label for b in BOARDS if b.caps.write_iops and b.caps.write_iops < 400]
    print("\n## Outliers flagged\n")
    print("| truth: slow cards | flagged | held |")
    print("| --- | --- | --- |")
    print(
        f"| {', '.join(slow)} | {', '.join(truth_flagged) or 'none'} | "
        f"{'yes' if truth_flagged == slow else 'NO'} |"
    )
    print(f"\nrule: {campaign['rule']}")
    print("\n## The failing board, as the fleet reported it\n")
    for board in BOARDS:
        if board.fails_at:
            print(f"    {lines.get(board.label, board.label + ': no line')}")
            shown = on_service.get(board.label)
            if shown:
                print(f"    on the service: {shown['status']}; result {shown['result']}")
    print("\n    " + (fleet.stdout.strip().splitlines() or ["(no verdict)"])[-1])

    print("\n## Time: the fleet against the slowest single run on this machine\n", flush=True)
    # Timed again once every board has flashmark (the first run installed it on board-01) and
    # the failing board has a working card: what a fleet's campaign costs from then on.
    for board in BOARDS:
        if board.fails_at:
            lab.replace_card(board.label)
    events = lab.folder / "events.jsonl"
    started = time.monotonic()
    began = time.time()
    timed = lab.fleet(f"{CAMPAIGN}-timed", *benchmark, "--events", str(events), timeout=3600)
    fleet_s = time.monotonic() - started
    print(f"  fleet: {fleet_s:.1f} s, exit {timed.returncode}", flush=True)
    phases = _phases([json.loads(line) for line in events.read_text().splitlines()], began, fleet_s)
    at_once_s = runs_at_once(lab, benchmark)
    singles = single_runs(lab, benchmark)
    slowest_run = max(run for run, _ in singles.values())
    slowest_both = max(run + upload for run, upload in singles.values())
    print()
    print("| what | wall time s |")
    print("| --- | ---: |")
    for label, (run_s, upload_s) in singles.items():
        print(f"| single: {label} `run` alone (+ `upload`) | {run_s:.1f} (+{upload_s:.1f}) |")
    print(f"| slowest single `run` | {slowest_run:.1f} |")
    print(f"| slowest single `run` + `upload` | {slowest_both:.1f} |")
    print(f"| `flashmark fleet run`, {len(BOARDS)} boards at once (first: installs on one) | "
          f"{first_s:.1f} |")  # fmt: skip
    print(f"| the same runs and uploads started at once by hand, no Ansible | {at_once_s:.1f} |")
    print(f"| `flashmark fleet run`, {len(BOARDS)} boards at once (timed) | {fleet_s:.1f} |")
    for name, seconds in phases.items():
        print(f"| - {name} | {seconds:.1f} |")
    print()
    against_run = (fleet_s / slowest_run - 1) * 100
    against_both = (fleet_s / slowest_both - 1) * 100
    print(
        f"coordination overhead against the slowest single run: {against_run:+.1f}% "
        f"({fleet_s - slowest_run:+.1f} s; against run + upload: {against_both:+.1f}%; "
        "target <= 10%)"
    )
    print(
        f"Ansible's part alone, against the same runs started at once by hand (the same CPUs "
        f"shared by the same boards): {(fleet_s / at_once_s - 1) * 100:+.1f}% "
        f"({fleet_s - at_once_s:+.1f} s)"
    )
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


def _phases(events: list[dict[str, object]], began: float, total_s: float) -> dict[str, float]:
    """Where the fleet's time went, from the callback's events (their times)."""

    def times(*tasks: str, kind: str | None = None) -> list[float]:
        return [
            float(str(e["time"]))
            for e in events
            if e.get("task") in tasks and (kind is None or e.get("event") == kind)
        ]

    first = min(float(str(e["time"])) for e in events)
    plan = times("flashmark root device", "flashmark plan", "flashmark refused")
    measure = times("flashmark measure")
    upload = times("flashmark upload", "flashmark outcome")
    last = max(float(str(e["time"])) for e in events)
    return {
        "the wrapper's checks and ansible-playbook's start": first - began,
        "plan on every board (job hash, refusals)": max(plan) - first,
        "between plan and measure": min(measure) - max(plan),
        "measure (from the first board's start to the last board's end)": max(measure)
        - min(measure),
        "upload and outcome (after the last board measured)": max(upload) - max(measure),
        "the playbook's end, the campaign's verdict read": total_s - (last - began),
    }


def runs_at_once(lab: FleetLab, benchmark: tuple[str, ...]) -> float:
    """Every measuring board's `flashmark run` then `flashmark upload`, all started at once
    without Ansible (what a loop over the boards in a shell would do, each in the background):
    the wall time until the last upload is in."""
    members = [m for m in lab.members.values() if m.device is not None and not m.board.fio_version]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=len(members)) as pool:
        list(pool.map(lambda member: run_and_upload(lab, member, benchmark, "at-once"), members))
    seconds = time.monotonic() - started
    print(f"  {len(members)} runs and uploads at once by hand: {seconds:.1f} s", flush=True)
    return seconds


def single_runs(lab: FleetLab, benchmark: tuple[str, ...]) -> dict[str, tuple[float, float]]:
    """Each working card's board alone, one after another, as its user would by hand: the
    same `flashmark run` the playbook runs on it (in its card's cgroup), then `flashmark
    upload` of that result into another campaign. (run s, upload s) by board."""
    times = {}
    for label, member in lab.members.items():
        board = member.board
        if board.fails_at or board.fio_version or member.device is None:
            continue
        times[label] = run_and_upload(lab, member, benchmark, "singles")
        print(f"  single {label}: run {times[label][0]:.1f} s, upload {times[label][1]:.1f} s")
    return times


def run_and_upload(
    lab: FleetLab, member: LabBoard, benchmark: tuple[str, ...], campaign: str
) -> tuple[float, float]:
    """The board's `flashmark run` (its own history for `campaign`), then its upload."""
    history = member.history.with_name(f"{campaign}.sqlite3")
    started = time.monotonic()
    done = subprocess.run(
        [*member.command, "run", str(member.target), *benchmark, "--json",
         "--db", str(history)],
        capture_output=True, text=True, timeout=3600, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    run_s = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"{member.board.label}: the run failed: {done.stderr[-500:]}")
    result = json.loads(done.stdout)["id"]
    started = time.monotonic()
    sent = subprocess.run(
        [*member.command, "upload", str(result), "--server", lab.service.url,
         "--campaign", campaign, "--label", member.board.label, "--token-stdin",
         "--db", str(history)],
        input=lab.service.token, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if sent.returncode != 0:
        raise SystemExit(f"{member.board.label}: the upload failed: {sent.stderr[-500:]}")
    return run_s, time.monotonic() - started


def _figure(value: float | None) -> str:
    return "" if value is None else f"{value:.0f}"


def _error(value: float | None, truth: int | None) -> str:
    if value is None or not truth:
        return ""
    return f"{(value - truth) / truth * 100:+.1f}%"


if __name__ == "__main__":
    sys.exit(main())
