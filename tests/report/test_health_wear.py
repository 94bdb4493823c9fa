"""The HTML report's "Wear over time": a device's health readings, taken with `flashmark health
--record` on simulated devices behind copies of the recorded trees, drawn as its reported wear
(a band) and the bytes written against time, once it has two readings among those shown."""

from __future__ import annotations

import re
import time
from pathlib import Path

from flashmark.health.result import decimal_bytes
from tests.cli_runner import flashmark
from tests.health.test_health_check import (
    SimulatedEmmc,
    SimulatedNvme,
    recorded_env,
    write_boot,
    write_counter,
)
from tests.probe.recorded import copied_tree, tree_env
from tests.report.html.page import Page


def record(env: dict[str, str]) -> int:
    done = flashmark("health", "--record", "/", env=env)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.rsplit("#", 1)[1])


def report(env: dict[str, str], ids: list[int], path: Path) -> tuple[Page, str]:
    """The report of `ids` written to `path`: the page read back, and its text."""
    done = flashmark("report", *map(str, ids), "-o", path, env=env)
    assert done.returncode == 0, done.stderr
    text = path.read_text(encoding="utf-8")
    return Page(text), text


def wear_svg(page_text: str) -> str:
    return page_text[page_text.index('wear-chart"') :].split("</svg>")[0]


def dot_labels(page_text: str) -> list[str]:
    """The bytes written at each reading: the labels of the written line's dots."""
    return re.findall(r'<g class="dots"><desc class="label">([^<]*)</desc>', wear_svg(page_text))


def band_outline(page_text: str) -> list[tuple[float, float]]:
    """The wear band's outline in drawing coordinates, without pygal's run to and from zero."""
    drawn = re.search(r'serie-0 color-0"><path d="M[^L]*L([^"]+)"', wear_svg(page_text))
    assert drawn is not None
    numbers = list(map(float, drawn.group(1).split()))
    return list(zip(numbers[0::2], numbers[1::2], strict=True))[:-2]


def test_an_emmc_read_three_times_draws_its_bracket_and_its_counted_writes(tmp_path):
    """Read, 200 GB written (a 15th of its life), read again in the same boot, rebooted (the
    kernel reads the next estimate), read again: the bytes are those the kernel counted since
    the first reading, the band steps up a tenth."""
    db = tmp_path / "history.db"
    device = SimulatedEmmc(tmp_path / "tree", bytes_per_life=3e12, worn=0.05, now=time.time())
    env = tree_env(device.folder, db)
    device.publish(time.time())
    ids = [record(env)]
    device.write(200e9)
    device.publish(time.time())
    ids.append(record(env))
    device.reboot(time.time())
    device.publish(time.time())
    ids.append(record(env))
    page, text = report(env, ids, tmp_path / "report.html")
    assert [chart.classes for chart in page.charts] == ["pygal-chart wear-chart"]
    assert page.all("body")[0].attributes["data-charts"] == "1"
    assert "#health-wear" in [a.attributes["href"] for a in page.all("a")]
    (chart,) = page.charts
    assert chart.legend == [
        "life used, as the device reports it (%)",
        "written (GB), the kernel's count since the first reading",
    ]
    counted = int(200e9 // 512) * 512
    assert dot_labels(text) == [decimal_bytes(b) for b in (0, counted, counted)]
    points = band_outline(text)
    lows, highs = points[:3], points[3:][::-1]  # the low edge forward, the high edge back
    assert [y for _, y in lows][:2] == [lows[0][1]] * 2 and lows[2][1] < lows[0][1]
    assert highs[2][1] < highs[1][1] == highs[0][1]  # up from 10% to 20% (y grows down)


def test_an_nvme_drive_is_drawn_from_its_own_count_and_a_lone_reading_from_none(tmp_path):
    db = tmp_path / "history.db"
    drive = SimulatedNvme(tmp_path / "nvme", bytes_per_percent=300e9)
    nvme_env = tree_env(tmp_path / "nvme", db)
    drive.publish()
    ids = [record(nvme_env)]
    drive.written += 500e9
    drive.publish()
    ids.append(record(nvme_env))
    sd_env = recorded_env("rpi4_sd", db)
    ids.append(record(sd_env))  # one reading of another device: no chart of it
    page, text = report(nvme_env, ids, tmp_path / "report.html")
    (chart,) = page.charts
    assert "SanDisk Ultra 3D NVMe" in chart.title
    assert chart.legend[1] == "written (GB), the drive's own count"
    units = [857_454, int((857_454 * 512_000 + 500e9) / 512_000)]
    assert dot_labels(text) == [decimal_bytes(u * 512_000) for u in units]


def test_readings_of_one_device_each_shown_once_draw_nothing(tmp_path):
    db = tmp_path / "history.db"
    env = recorded_env("emmc_wear", db)
    first = record(env)
    page, text = report(env, [first], tmp_path / "report.html")
    assert page.charts == []
    assert "health-wear" not in text


def test_a_device_that_reports_no_wear_is_drawn_from_its_counted_writes(tmp_path):
    """An SD card (no wear reported) read, 30 MB written, read again: the bytes the kernel
    counted are the chart, on its one axis."""
    tree = copied_tree("rpi4_sd", tmp_path / "sd")
    stat = next((tree / "sys").rglob("mmcblk0/stat"))
    env = tree_env(tree, tmp_path / "history.db")
    ids = []
    for uptime, written in ((100.0, 0.0), (200.0, 30e6)):
        write_boot(tree, "boot-1", uptime)
        write_counter(stat, written)
        ids.append(record(env))
    page, text = report(env, ids, tmp_path / "report.html")
    (chart,) = page.charts
    assert chart.legend == [
        "life used: the device reports none",
        "written (MB), the kernel's count since the first reading",
    ]
    assert dot_labels(text) == [decimal_bytes(0), decimal_bytes(30e6)]
