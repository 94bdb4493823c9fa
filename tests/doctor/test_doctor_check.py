"""`flashmark doctor` on recorded trees (tests/data/probe, each with its SOURCES.md), and on
copies of them with one condition changed, each change said where it is made."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from flashmark.bench.grading.conditions import report_warnings
from flashmark.bench.kind import RUN
from flashmark.cli.doctor import _latest_rate
from flashmark.doctor.check import DoctorRequest, diagnose
from flashmark.doctor.result import DoctorResult
from flashmark.history.store import History
from flashmark.probe.target import probe_target
from flashmark.probe.tools import tool_runner_for
from tests.cli_runner import flashmark
from tests.probe.recorded import DATA, copied_tree, tree_env, tree_roots

REPORT_DATA = Path(__file__).resolve().parents[1] / "data" / "report"
CPUS = ("cpu0", "cpu1", "cpu2", "cpu3")


def copied(name: str, tmp_path: Path) -> Path:
    return copied_tree(name, tmp_path / name)


def healthy_pi4(tmp_path: Path) -> Path:
    """The Pi 4 tree with a steady supply (get_throttled 0x0) and the ondemand governor."""
    tree = copied("rpi4_sd", tmp_path)
    (tree / "tools/vcgencmd_get_throttled.txt").write_text("throttled=0x0\n")
    for cpu in CPUS:
        governor = tree / f"sys/devices/system/cpu/{cpu}/cpufreq/scaling_governor"
        if governor.exists():
            governor.write_text("ondemand\n")
    return tree


def healthy_pi5(tmp_path: Path) -> Path:
    """The Pi 5 tree with its A2 card queued: the kernel's "Command Queue Engine enabled" line
    (as rpi5_cqe_recovery/SOURCES.md quotes it) added to its log."""
    tree = copied("rpi5_a2", tmp_path)
    log = tree / "tools/dmesg.txt"
    log.write_text(log.read_text() + "[    2.668229] mmc0: Command Queue Engine enabled\n")
    return tree


def diagnosed(tree: Path, target: str = "/") -> DoctorResult:
    return diagnose(DoctorRequest(target), tree_roots(tree))


def whats(tree: Path, target: str = "/") -> list[str]:
    result = diagnosed(tree, target)
    return [f"{finding.category}: {finding.what}" for finding in result.findings]


def test_healthy_pi_4_pi_5_and_x86_trees_have_no_finding(tmp_path):
    assert whats(healthy_pi4(tmp_path)) == []  # DDR50 is the Pi 4 host's fastest: no finding
    assert whats(healthy_pi5(tmp_path)) == []  # SDR104, queued, no throttling
    result = diagnosed(DATA / "virtio_vda")  # this x86 VM
    assert result.findings == ()
    assert result.not_checked == (
        "under-voltage and throttling: not available here (a Raspberry Pi's `vcgencmd "
        "get_throttled` tells them)",
    )


def test_a_pi_4_under_voltage_throttled_and_on_powersave_is_told_each_fix():
    result = diagnosed(DATA / "rpi4_sd")
    assert [f.what for f in result.findings] == [
        "under-voltage since boot (get_throttled=0x50000)",  # its throttling is the supply's
        "CPU governor powersave",
    ]
    assert "15 W (5.1 V, 3 A)" in result.findings[0].fix
    assert "scaling_governor" in result.findings[1].fix


def test_a_pi_5_sd_card_fallen_back_to_high_speed_is_capped_at_25_mb_s(tmp_path):
    tree = healthy_pi5(tmp_path)
    log = tree / "tools/dmesg.txt"
    log.write_text(log.read_text().replace("ultra high speed SDR104 SDXC", "high speed SDXC"))
    result = diagnosed(tree)
    (finding,) = result.findings
    assert finding.category == "sd" and finding.what.startswith("SD bus in high speed mode")
    assert finding.cap_bytes_per_second == 25e6


def test_a_pi_5_nvme_at_gen_2_gets_the_gen_3_line_and_its_risk():
    (finding,) = diagnosed(DATA / "nvme_pcie").findings
    assert finding.what == "PCIe at 5 GT/s x1 (Gen 2), the drive can do 8 GT/s"
    assert finding.fix.startswith("dtparam=pciex1_gen=3 in /boot/firmware/config.txt")
    assert "may be unstable" in finding.fix
    assert finding.cap_bytes_per_second == pytest.approx(500e6)


def test_a_usb_3_stick_at_480_on_usb_storage_is_two_findings():
    assert whats(DATA / "usb_stick_usb_storage", "/dev/sde") == [
        "usb: USB link at 480 Mb/s, the device (USB 3.00) can do 5000 Mb/s",
        "usb: driver usb-storage (Bulk-Only Transport) on a USB 3 device",
    ]


def test_uas_resets_give_the_quirk_only_once_power_is_ruled_out(tmp_path):
    """The JMS578 tree's published kernel log (its SOURCES.md) has no get_throttled beside it:
    power first. The same tree with a steady supply read: the quirk line."""
    result = diagnosed(DATA / "usb_ssd_jms578")
    (finding,) = result.findings
    assert finding.what == "4 UAS command aborts or resets in the kernel log (bridge 152d:0578)"
    assert finding.fix.startswith("power first: use the official 15 W (5.1 V, 3 A) supply")
    tree = copied("usb_ssd_jms578", tmp_path)
    (tree / "tools/vcgencmd_get_throttled.txt").write_text("throttled=0x0\n")
    (quirk,) = diagnosed(tree).findings
    assert quirk.fix.startswith("add usb-storage.quirks=152d:0578:u to /boot/firmware/cmdline.txt")
    (tree / "tools/vcgencmd_get_throttled.txt").write_text("throttled=0x50000\n")
    under_voltage = diagnosed(tree).findings
    assert [f.what.split(" (")[0] for f in under_voltage] == [
        "4 UAS command aborts or resets in the kernel log",
        "under-voltage since boot",
    ]
    assert under_voltage[0].why.startswith("under-voltage was seen")
    # A tree without a kernel log says nothing of UAS.
    assert diagnosed(DATA / "usb_ssd_uas", "/dev/sda").findings == ()


def test_swap_on_the_card_and_a_sync_mount_are_findings(tmp_path):
    tree = healthy_pi4(tmp_path)
    (tree / "proc/swaps").write_text(
        "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
        "/var/swap                               file\t\t102396\t\t0\t\t-2\n"
    )
    mountinfo = tree / "proc/self/mountinfo"
    mountinfo.write_text(
        mountinfo.read_text().replace(" - ext4 /dev/mmcblk0p2 rw", " - ext4 /dev/mmcblk0p2 rw,sync")
    )
    assert whats(tree) == [
        "host: swap file /var/swap, on the device",
        "host: / mounted with sync",
    ]


def test_the_command_keeps_its_diagnosis_and_prints_its_verdict(tmp_path):
    base = DATA / "nvme_pcie"
    env = tree_env(base, tmp_path / "history.db")
    done = flashmark("doctor", "--json", env=env)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["schema"] == "flashmark.doctor/1"
    assert document["summary"] == ("1 finding: PCIe at 5 GT/s x1 (Gen 2), the drive can do 8 GT/s")
    shown = flashmark("show", str(document["id"]), env=env)
    assert "dtparam=pciex1_gen=3" in shown.stdout


def run_on(tree: Path, target: str, seq_read_mb_s: float) -> dict[str, Any]:
    """The recorded quick run with its device read from `tree` and `seq_read_mb_s` as its
    fastest sequential figure: a run the history holds for that device."""
    run = RUN.from_document(json.loads((REPORT_DATA / "quick-a1-card.json").read_text()))
    tests = tuple(
        replace(test, read=replace(test.read, bw_bytes=seq_read_mb_s * 1e6))
        if test.spec.name == "seq-read" and test.read is not None
        else test
        for test in run.tests
    )
    probe = probe_target(target, tree_roots(tree))
    return RUN.to_document(replace(run, id=None, tests=tests, probe=probe))


@pytest.mark.parametrize(
    ("seq_read_mb_s", "cost"),
    [
        (452.0, "seq-read 452.0 MB/s in run #1 (2026-11-22T01:35:25+00:00): within 20% of "
                "this cap, it is the limit"),
        (210.0, "seq-read 210.0 MB/s in run #1 (2026-11-22T01:35:25+00:00): 58% below this "
                "cap, so something else limits it first"),
        (620.0, "seq-read 620.0 MB/s in run #1 (2026-11-22T01:35:25+00:00): above this cap, "
                "so that run was made before it held"),
    ],
)
def test_a_cap_is_held_against_the_latest_run_on_the_same_device(tmp_path, seq_read_mb_s, cost):
    base = DATA / "nvme_pcie"
    history = History(tmp_path / "history.db")
    other = run_on(DATA / "rpi5_a2", "/", 80.0)  # another device: never the one compared
    mine = run_on(base, "/", seq_read_mb_s)
    for document in (mine, other):
        history.save(kind=RUN.name, target="/", label="", document=document)
    history.save(kind=RUN.name, target="/", label="", document=other)  # newer, not this device
    env = tree_env(base, tmp_path / "history.db")
    done = flashmark("doctor", env=env)
    assert done.returncode == 0, done.stderr
    assert "measured" in done.stdout
    assert " ".join(cost.split()) in " ".join(done.stdout.split())
    document = json.loads(flashmark("doctor", "--json", "--no-save", env=env).stdout)
    assert document["measured"]["run_id"] == 1 and document["measured"]["test"] == "seq-read"


def _set(tree: Path, relative: str, text: str) -> None:
    path = tree / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_an_a2_card_without_queueing_on_a_pi_5_gets_the_line_for_its_kernel(tmp_path):
    """rpi5_a2's Kingston A2 card, not on Raspberry Pi's allow-list, runs without queueing;
    the line depends on what sd_cqe means in the running kernel."""
    (finding,) = diagnosed(DATA / "rpi5_a2").findings
    assert finding.category == "sd" and finding.what.startswith("A2 card without command queueing")
    assert finding.fix.startswith(
        "what sd_cqe means is not known for this kernel (6.6.62+rpt-rpi-2712)"
    )
    tree = copied("rpi5_a2", tmp_path)
    osrelease = "proc/sys/kernel/osrelease"
    _set(tree, osrelease, "6.18.1+rpt-rpi-2712\n")
    (tristate,) = diagnosed(tree).findings
    assert tristate.fix.startswith("dtparam=sd_cqe=2 in /boot/firmware/config.txt, then reboot")
    assert "corrupt data" in tristate.fix
    _set(tree, osrelease, "6.6.20+rpt-rpi-2712\n")
    (old,) = diagnosed(tree).findings
    assert old.fix.startswith("update the kernel (sudo apt full-upgrade)")
    # No kernel log, or one that no longer reaches back to the card's start, cannot tell.
    (tree / "tools/dmesg.txt").rename(tree / "dmesg.txt")
    unread = diagnosed(tree)
    assert unread.findings == ()
    assert "SD command queueing: not read (no kernel log)" in unread.not_checked
    _set(tree, "tools/dmesg.txt", "[ 9999.000000] usb 1-1: new high-speed USB device\n")
    result = diagnosed(tree)
    assert result.findings == ()
    assert any(note.startswith("SD command queueing: not read") for note in result.not_checked)


def test_cqe_recovery_in_the_log_is_the_finding_and_sd_cqe_0_its_fix(tmp_path):
    (finding,) = diagnosed(DATA / "rpi5_cqe_recovery").findings
    assert finding.what == "1 'running CQE recovery' line for mmc0 in the kernel log"
    assert finding.fix.startswith(
        "dtparam=sd_cqe=0 in /boot/firmware/config.txt (dtparam=sd_cqe=off on a kernel older"
    )
    tree = copied("rpi5_cqe_recovery", tmp_path)
    _set(tree, "proc/sys/kernel/osrelease", "6.13.0-v8-16k+\n")
    (tristate,) = diagnosed(tree).findings
    assert tristate.fix == (
        "dtparam=sd_cqe=0 in /boot/firmware/config.txt, then reboot: command queueing off for "
        "this card"
    )


@pytest.mark.parametrize("board", ["Raspberry Pi 4 Model B Rev 1.4", "Radxa ROCK 5B"])
def test_sd_queueing_elsewhere_than_a_pi_5_is_not_available_here(tmp_path, board):
    tree = copied("rpi5_a2", tmp_path)
    _set(tree, "sys/firmware/devicetree/base/model", f"{board}\x00")
    result = diagnosed(tree)
    assert result.findings == ()
    assert (
        "SD command queueing: not available here (Raspberry Pi's kernel queues an A2 card's "
        "commands on a Raspberry Pi 5 only)"
    ) in result.not_checked


def test_nvme_resets_give_the_kernels_power_saving_parameters(tmp_path):
    result = diagnosed(DATA / "nvme_aspm_resets")
    resets = [f for f in result.findings if "NVMe controller reset" in f.what]
    assert [f.what for f in resets] == [
        "1 NVMe controller reset or PCIe bus error in the kernel log (nvme0)"
    ]
    # A drive that drops off its link at Gen 2 is never told to try the uncertified Gen 3.
    assert not [f for f in result.findings if "pciex1_gen=3" in f.fix and f is not resets[0]]
    assert resets[0].fix.startswith(
        "add nvme_core.default_ps_max_latency_us=0 pcie_aspm=off pcie_port_pm=off to "
        "/boot/firmware/cmdline.txt (one line)"
    )
    tree = copied("nvme_aspm_resets", tmp_path)
    # Another controller's lines are not this drive's, and an error the link corrected itself
    # (logged on many healthy machines) resets nothing.
    log = tree / "tools/dmesg.txt"
    log.write_text(
        log.read_text()
        + "[   99.0] nvme nvme1: controller is down; will reset\n"
        + "[   99.1] pcieport 0000:00:00.0: AER: Corrected error message received from "
        "0000:01:00.0\n"
        + "[   99.2] nvme 0000:01:00.0: PCIe Bus Error: severity=Corrected, type=Physical "
        "Layer, (Receiver ID)\n"
    )

    def reset_fix() -> str:
        found = diagnosed(tree).findings
        (reset,) = [f for f in found if "NVMe controller reset" in f.what]
        assert reset.what.startswith("1 NVMe controller reset")
        return reset.fix

    _set(tree, "tools/vcgencmd_get_throttled.txt", "throttled=0x50000\n")
    assert reset_fix().startswith("power first: use the official 27 W (5 V, 5 A) supply")
    _set(tree, "tools/vcgencmd_get_throttled.txt", "throttled=0x0\n")
    pci = next(tree.glob("sys/devices/platform/axi/*/pci0000:00/*/0000:01:00.0"))
    (pci / "current_link_speed").write_text("8.0 GT/s PCIe\n")
    assert reset_fix().startswith("remove dtparam=pciex1_gen=3 from /boot/firmware/config.txt")
    _set(tree, "sys/firmware/devicetree/base/model", "Radxa ROCK 5B\x00")
    assert "GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub" in reset_fix()


def test_bfq_is_a_finding_on_an_nvme_drive_only(tmp_path):
    (bfq,) = [f for f in diagnosed(DATA / "nvme_bfq").findings
              if f.category == "host"]  # fmt: skip
    assert bfq.what == "I/O scheduler bfq on nvme0n1"
    assert bfq.fix.startswith("echo none | sudo tee /sys/block/nvme0n1/queue/scheduler")
    assert 'ATTR{queue/scheduler}="none" in /etc/udev/rules.d/60-scheduler.rules' in bfq.fix
    # A run's warnings tell it too: its probe alone has the scheduler.
    roots = tree_roots(DATA / "nvme_bfq")
    report = probe_target("/", roots, tool_runner_for(roots))
    assert f"nvme0n1 (nvme): {bfq.what}: {bfq.why}" in report_warnings(
        report.devices, report.environment
    )
    # On an SD card BFQ moves as much as the others (Documentation/block/bfq-iosched.rst).
    tree = healthy_pi4(tmp_path)
    scheduler = next(tree.glob("sys/devices/platform/**/mmcblk0/queue/scheduler"))
    scheduler.write_text("mq-deadline kyber [bfq] none\n")
    assert whats(tree) == []


def test_mount_options_that_multiply_writes_are_each_told_with_their_fstab_fix(tmp_path):
    findings = diagnosed(DATA / "rpi4_mount_writes").findings
    assert [f.what for f in findings] == [
        "/ mounted with dirsync",
        "/ mounted with strictatime (neither noatime nor relatime)",
        "/ mounted with data=journal",
        "/ mounted with commit=1",
    ]
    assert all("/etc/fstab (/)" in f.fix for f in findings)
    # ext4's default commit is 5 s: a longer one (emmc_wear's commit=600) writes less.
    assert not [f for f in whats(DATA / "emmc_wear") if "commit" in f]
    # A read-only filesystem writes nothing.
    tree = copied("rpi4_mount_writes", tmp_path)
    _set(tree, "proc/self/mountinfo", "22 1 179:2 / / ro - ext4 /dev/mmcblk0p2 ro,dirsync\n")
    assert whats(tree) == []


def test_powersave_is_intel_pstates_own_scaling_and_no_finding(tmp_path):
    """An x86 machine: intel_pstate in active mode runs its own "powersave", its default,
    which follows the load (Documentation/admin-guide/pm/intel_pstate.rst); under the generic
    acpi-cpufreq driver powersave holds the lowest clock."""
    tree = copied("virtio_vda", tmp_path)
    cpufreq = "sys/devices/system/cpu/cpu0/cpufreq"
    _set(tree, f"{cpufreq}/scaling_governor", "powersave\n")
    _set(tree, f"{cpufreq}/scaling_driver", "intel_pstate\n")
    assert whats(tree) == []
    _set(tree, f"{cpufreq}/scaling_driver", "acpi-cpufreq\n")
    assert whats(tree) == ["host: CPU governor powersave"]


def test_uas_resets_of_another_device_are_not_this_ones(tmp_path):
    tree = copied("usb_ssd_jms578", tmp_path)
    _set(tree, "tools/vcgencmd_get_throttled.txt", "throttled=0x0\n")
    log = tree / "tools/dmesg.txt"
    log.write_text(
        log.read_text()
        + "[  250.1] sd 1:0:0:0: [sdb] tag#3 uas_eh_abort_handler 0 uas-tag 1 inflight: CMD IN\n"
        + "[  250.2] scsi host1: uas_eh_device_reset_handler start\n"
        + "[  250.3] scsi host0: uas_eh_device_reset_handler start\n"
    )
    (finding,) = diagnosed(tree).findings
    assert finding.what == "5 UAS command aborts or resets in the kernel log (bridge 152d:0578)"


def test_an_a2_card_without_the_features_the_kernel_queues_with_is_no_finding(tmp_path):
    """Raspberry Pi's sd.c writes the card's `ext_perf`: bit 4 set only for a card with a queue,
    a cache and power-off notification, the only cards it ever queues."""
    tree = copied("rpi5_a2", tmp_path)
    ext_perf = tree / "sys/devices/platform/axi/1000fff000.mmc/mmc_host/mmc0/mmc0:5048/ext_perf"
    ext_perf.write_text("0f\n")
    result = diagnosed(tree)
    assert result.findings == ()
    assert (
        "SD command queueing: this A2 card cannot queue here (ext_perf=0f: no queue, cache or "
        "power-off notification the kernel needs)"
    ) in result.not_checked
    ext_perf.write_text("1f\n")
    (finding,) = diagnosed(tree).findings
    assert finding.what.startswith("A2 card without command queueing")


def test_the_measured_figure_is_the_newest_run_with_a_sequential_test(tmp_path):
    """A newer run of the device without seq-read or seq-write (a1) gives no figure: the one
    before it does."""
    base = DATA / "nvme_pcie"
    history = History(tmp_path / "history.db")
    history.save(kind=RUN.name, target="/", label="", document=run_on(base, "/", 452.0))
    newer = RUN.from_document(run_on(base, "/", 452.0))
    graded_only = tuple(t for t in newer.tests if not t.spec.name.startswith("seq-"))
    history.save(
        kind=RUN.name, target="/", label="",
        document=RUN.to_document(replace(newer, tests=graded_only)),
    )  # fmt: skip
    device = probe_target("/", tree_roots(base)).device
    assert device is not None
    measured = _latest_rate(history, device)
    assert measured is not None and (measured.run_id, measured.test) == (1, "seq-read")
    assert _latest_rate(History(tmp_path / "none.db"), device) is None
