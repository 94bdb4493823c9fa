"""`flashmark health` on recorded trees (tests/data/probe), and on a copy of the eMMC tree whose
write counter and life estimate are driven by a simulated device of known endurance: readings
taken over a year, with reboots, give a forecast whose interval holds the true years left."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from flashmark.health.check import HealthRequest, check_health
from flashmark.health.kind import HEALTH
from flashmark.health.result import HealthResult
from flashmark.probe.mmc_ioctl import RecordedMmcIoctl
from flashmark.system.sysroot import SystemRoots
from tests.cli_runner import flashmark
from tests.probe.recorded import DATA, copied_tree, tree_env, tree_roots

EMMC_DEVICE = "devices/platform/sunxi-mmc.2/mmc_host/mmc1/mmc1:0001"
DAY = 86_400.0


class SimulatedEmmc:
    """The recorded eMMC tree, copied, with a device of `bytes_per_life` behind it: its
    counter (stat field 7) counts what was written since boot, its life estimate steps each
    tenth of its life (and is read by the kernel when the card starts, as sysfs shows it), the
    boot id and uptime change at each reboot."""

    def __init__(self, folder: Path, bytes_per_life: float, worn: float, now: float) -> None:
        copied_tree("emmc_wear", folder)
        self.folder = folder
        self.bytes_per_life = bytes_per_life
        self.written = worn * bytes_per_life  # before the record began
        self.boot = 0
        self.since_boot = 0.0
        self.boot_time = 0.0
        self.roots = SystemRoots(folder / "sys", folder / "proc", folder / "debug")
        self.reboot(now)

    @property
    def wear(self) -> float:
        return self.written / self.bytes_per_life

    def write(self, byte_count: float) -> None:
        self.written += byte_count
        self.since_boot += byte_count

    def reboot(self, now: float) -> None:
        self.boot += 1
        self.since_boot = 0.0
        self.boot_time = now
        self.wear_at_boot = self.wear  # the kernel reads the life estimate when the card starts

    def publish(self, now: float) -> None:
        """What the kernel shows now: the counter, and the life estimate it read at boot."""
        device = self.folder / "sys" / EMMC_DEVICE
        write_counter(device / "block/mmcblk1/stat", self.since_boot)
        estimate = min(11, int(self.wear_at_boot * 10) + 1)
        (device / "life_time").write_text(f"0x{estimate:02x} 0x{estimate:02x}\n")
        write_boot(self.folder, f"boot-{self.boot}", now - self.boot_time)


def write_counter(stat: Path, written_since_boot: float) -> None:
    """A block device's stat file whose sectors-written field (the 7th) counts these bytes."""
    fields = ["0"] * 17
    fields[6] = str(int(written_since_boot // 512))
    stat.write_text(" ".join(fields) + "\n")


def write_boot(tree: Path, boot_id: str, uptime_s: float) -> None:
    """The boot id and uptime a tree's kernel shows."""
    random_folder = tree / "proc/sys/kernel/random"
    random_folder.mkdir(parents=True, exist_ok=True)
    (random_folder / "boot_id").write_text(f"{boot_id}\n")
    (tree / "proc/uptime").write_text(f"{uptime_s:.2f} 0.00\n")


def daily_readings(
    device: SimulatedEmmc, steps: int, mmc: RecordedMmcIoctl | None = None
) -> list[HealthResult]:
    """Daily readings of `device` written 20-60 GB a day (noisy), rebooted every week or so
    (each reboot losing what was written since the last reading), until the forecast has seen
    `steps` life steps: every interval with both ends holds the true years left."""
    rng = random.Random(7)
    now = device.boot_time
    readings: list[HealthResult] = []
    start = device.written
    for _day in range(500):
        now += DAY
        day = rng.uniform(20e9, 60e9)
        if rng.random() < 1 / 7:  # what was written since the last reading is lost to the count
            lost = day * rng.random()
            device.write(lost)
            device.reboot(now - 3600)
            day -= lost
        device.write(day)
        device.publish(now)
        readings.append(check_health(HealthRequest("/"), readings, device.roots, now=now, mmc=mmc))
        forecast = readings[-1].forecast
        if forecast.years_high is not None:
            assert forecast.years_low is not None
            # The truth: the life left at the rate the device was really written.
            true_rate = (device.written - start) / len(readings)  # bytes a day
            true_years = (1 - device.wear) * device.bytes_per_life / true_rate / 365.25
            assert forecast.years_low <= true_years <= forecast.years_high, len(readings)
        if forecast.steps_seen >= steps:
            return readings
    raise AssertionError(f"not {steps} steps in 500 days")


def test_a_year_of_readings_forecasts_an_interval_that_holds_the_truth(tmp_path):
    """Daily readings of a card written 20-60 GB a day (noisy), rebooted every week or so
    (each reboot losing what was written since the last reading), its life estimate as the
    kernel read it at boot: every interval with both ends holds the true years left, and from
    the third life step on it is at most 3 wide (high/low), as docs/health.md says."""
    device = SimulatedEmmc(tmp_path / "tree", bytes_per_life=12e12, worn=0.05, now=1.8e9)
    readings = daily_readings(device, steps=3)
    result = readings[-1]
    forecast = result.forecast
    assert forecast.years_low is not None and forecast.years_high is not None
    assert forecast.years_high / forecast.years_low <= 3
    assert result.rate is not None and not result.rate.since_boot
    assert result.device_key.startswith("cid:") and result.card_cid is not None
    assert result.readings == len(readings)


def test_the_first_reading_gives_the_rate_since_boot_and_waits_for_a_later_one(tmp_path):
    device = SimulatedEmmc(tmp_path / "tree", bytes_per_life=3e12, worn=0.05, now=0.0)
    device.write(10e9)
    device.publish(3 * 3600.0)  # 10 GB in the 3 hours since boot
    result = check_health(HealthRequest("/"), [], device.roots, now=3 * 3600.0)
    assert result.rate is not None and result.rate.since_boot
    assert result.rate.bytes_per_day == pytest.approx(80e9, rel=1e-6)
    assert result.forecast.unknown
    assert HEALTH.summary(result) == (
        "unknown until a later reading sets writes against the wear; it takes 80.00 GB/day"
    )


def recorded_env(name: str, db: Path) -> dict[str, str]:
    return tree_env(DATA / name, db)


def test_a_recorded_nvme_drive_is_read_from_its_smart_log_and_kept(tmp_path):
    env = recorded_env("nvme_pcie", tmp_path / "history.db")
    first = flashmark("health", "/", "--json", env=env)
    assert first.returncode == 0, first.stderr
    document = json.loads(first.stdout)
    assert document["schema"] == "flashmark.health/1"
    assert document["health"]["percentage_used"] == 0
    assert document["health"]["data_units_written"] == 857_454
    assert document["health"]["available_spare"] == 100
    assert document["red_flags"] == []
    again = flashmark("health", "/", env=env)
    assert again.returncode == 0, again.stderr
    assert "NVMe, SanDisk Ultra 3D NVMe" in again.stdout
    assert "2 of this device" in again.stdout
    listed = flashmark("history", env=env)
    assert listed.stdout.count("health") >= 2


def test_a_silent_sd_card_is_unknown_and_says_what_was_not_read(tmp_path):
    env = recorded_env("rpi4_sd", tmp_path / "history.db")
    result = flashmark("health", "/", "--no-save", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "verdict: unknown: the device reports no wear" in (result.stdout + result.stderr)
    assert "SD cards report no wear through the kernel" in (result.stdout + result.stderr)


def test_an_emmc_at_the_end_of_its_life_is_flagged_in_the_verdict(tmp_path):
    tree = copied_tree("emmc_wear", tmp_path / "tree")
    (tree / "sys" / EMMC_DEVICE / "life_time").write_text("0x0b 0x0a\n")
    (tree / "sys" / EMMC_DEVICE / "pre_eol_info").write_text("0x03\n")
    env = {
        **recorded_env("emmc_wear", tmp_path / "history.db"),
        "FLASHMARK_SYSFS_ROOT": str(tree / "sys"),
    }
    result = flashmark("health", "/", "--no-save", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (
        "verdict: replace it: pre-EOL urgent: the reserved blocks are running out; "
        "life time estimate A exceeded"
    ) in (result.stdout + result.stderr)


class SimulatedNvme:
    """The recorded NVMe tree, copied, its SMART log's written units and percentage used
    set as a drive of `bytes_per_percent` would report them."""

    def __init__(self, folder: Path, bytes_per_percent: float) -> None:
        copied_tree("nvme_pcie", folder)
        self.log = folder / "tools" / "nvme_smart-log_dev_nvme0.txt"
        self.recorded = self.log.read_text(encoding="utf-8")
        self.bytes_per_percent = bytes_per_percent
        self.written = 857_454 * 512_000.0  # as recorded
        self.roots = tree_roots(folder)

    def publish(self) -> None:
        used = int(self.written / self.bytes_per_percent)
        units = int(self.written / 512_000)
        text = self.recorded.replace(
            "percentage_used\t\t\t\t: 0%", f"percentage_used\t\t\t\t: {used}%"
        )
        text = text.replace("857,454 (439.02 GB)", f"{units:,} ({units * 512_000 / 1e9:.2f} GB)")
        self.log.write_text(text, encoding="utf-8")


def test_an_nvme_drive_is_forecast_from_its_own_count_of_writes(tmp_path):
    """Two readings ten days apart: the rate is the drive's data_units_written over them (no
    kernel counter in the tree), and one reading past 1% already bounds both ends."""
    drive = SimulatedNvme(tmp_path / "tree", bytes_per_percent=300e9)
    first, second = ten_days_apart(drive, bytes_per_day=50e9)
    assert first.health.data_units_written == 857_454
    assert second.health.percentage_used == 3
    assert HEALTH.summary(second).endswith("years left at 50.00 GB/day")


def ten_days_apart(
    drive: SimulatedNvme | SimulatedSataSsd, bytes_per_day: float
) -> tuple[HealthResult, HealthResult]:
    """Two readings of `drive`, ten days of `bytes_per_day` apart: the first has no rate, the
    second the drive's own and a forecast whose interval holds the true years left."""
    drive.publish()
    first = check_health(HealthRequest("/"), [], drive.roots, now=1.8e9)
    assert first.rate is None
    drive.written += 10 * bytes_per_day
    drive.publish()
    second = check_health(HealthRequest("/"), [first], drive.roots, now=1.8e9 + 10 * DAY)
    assert second.rate is not None and not second.rate.since_boot
    assert second.rate.bytes_per_day == pytest.approx(bytes_per_day, rel=1e-3)
    forecast = second.forecast
    assert forecast.years_low is not None and forecast.years_high is not None
    true_years = (100 * drive.bytes_per_percent - drive.written) / bytes_per_day / 365.25
    assert forecast.years_low <= true_years <= forecast.years_high
    return first, second


def test_a_usb_sata_ssd_is_read_through_smartctl_and_kept(tmp_path):
    env = recorded_env("usb_ssd_sat_smart", tmp_path / "history.db")
    result = flashmark("health", "/", "--json", env=env)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["health"]["percentage_used"] == 1  # Wear_Leveling_Count 99
    assert document["health"]["power_on_hours"] == 1376
    assert document["health"]["smart_passed"] is True
    assert document["red_flags"] == [] and document["skipped"] == []
    shown = flashmark("health", "/", env=env)
    assert "1% of rated endurance used" in shown.stdout
    assert "1,376 hours" in shown.stdout


def test_a_usb_nvme_enclosure_is_read_through_its_bridges_pass_through(tmp_path):
    env = recorded_env("usb_nvme_asmedia", tmp_path / "history.db")
    result = flashmark("health", "/", "--json", "--no-save", env=env)
    assert result.returncode == 0, result.stderr
    health = json.loads(result.stdout)["health"]
    assert health["data_units_written"] == 621_718 and health["available_spare"] == 100
    assert health["sources"] == ["smartctl -d sntasmedia"]


@pytest.mark.parametrize(
    ("tree", "tools", "said"),
    [
        ("usb_ssd_sat_smart", "tools_user", "SMART needs root: sudo flashmark health /"),
        (  # a recorded tree without smartctl's answer: nothing to install
            "usb_ssd_jms578",
            "tools",
            "SMART not read: smartctl is not among the recorded tree's tool outputs",
        ),
        ("usb_nvme_jms581_sat", "tools", "the USB bridge 152d:a581 passes none"),
    ],
)
def test_smart_not_read_says_why_and_how(tmp_path, tree, tools, said):
    env = {
        **recorded_env(tree, tmp_path / "history.db"),
        "FLASHMARK_TOOLS_ROOT": str(DATA / tree / tools),
    }
    result = flashmark("health", "/", "--no-save", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    output = " ".join((result.stdout + result.stderr).split())  # the terminal wraps notes
    assert said in output
    assert "verdict: unknown: the device reports no wear" in output


class SimulatedSataSsd:
    """The recorded USB-SATA tree, copied, its smartctl answer's Wear_Leveling_Count and
    Total_LBAs_Written set as a drive of `bytes_per_percent` would report them."""

    def __init__(self, folder: Path, bytes_per_percent: float) -> None:
        copied_tree("usb_ssd_sat_smart", folder)
        self.answer = folder / "tools" / "smartctl_--json=c_-a_-n_standby_dev_sda.txt"
        self.document = json.loads(self.answer.read_text(encoding="utf-8"))
        self.bytes_per_percent = bytes_per_percent
        self.written = 24_021_862_977 * 512.0  # as recorded
        self.roots = tree_roots(folder)

    def publish(self) -> None:
        for row in self.document["ata_smart_attributes"]["table"]:
            if row["name"] == "Wear_Leveling_Count":
                row["value"] = 100 - int(self.written / self.bytes_per_percent)
            if row["name"] == "Total_LBAs_Written":
                row["raw"]["value"] = int(self.written // 512)
        self.answer.write_text(json.dumps(self.document), encoding="utf-8")


def test_a_usb_sata_ssd_is_forecast_from_its_own_count_of_writes(tmp_path):
    """As an NVMe drive: two readings ten days apart give the rate from Total_LBAs_Written,
    and the wear attribute's percent bounds the years left from both sides."""
    drive = SimulatedSataSsd(tmp_path / "tree", bytes_per_percent=6e12)
    first, _ = ten_days_apart(drive, bytes_per_day=40e9)
    assert first.health.percentage_used == 2
