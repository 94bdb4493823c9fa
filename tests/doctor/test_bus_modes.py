"""The SD bus mode and the PCIe link rules on the kernel's own wordings and edge modes."""

from __future__ import annotations

import pytest

from flashmark.doctor.pcie import pcie_findings
from flashmark.doctor.sd import bus_mode, sd_bus_findings
from flashmark.probe.model import Card, MmcBus, PcieLink, Ssr

PI5 = "Raspberry Pi 5 Model B Rev 1.0"


@pytest.mark.parametrize(
    ("timing", "mode"),
    [
        ("sd uhs DDR50", "DDR50"),  # debugfs ios
        ("sd high-speed", "high speed"),  # debugfs ios writes it with a hyphen
        ("ultra high speed SDR104 SDXC", "SDR104"),  # the kernel log
        ("ultra high speed SDR12 SDHC", "SDR12"),
        ("legacy", "legacy"),
        (None, None),
    ],
)
def test_the_mode_is_read_from_either_wording(timing, mode):
    assert bus_mode(timing) == mode


def _card(uhs: str | None) -> Card:
    ssr = Ssr("", "C10", uhs, None, None, None, None, None)
    return Card("SD", None, None, None, ssr, None, None)


def _bus(timing: str) -> MmcBus:
    return MmcBus("mmc0", None, timing, None, None, None, None, None, None, None, None, None)


def test_a_uhs_card_at_ddr50_on_a_pi_5_may_be_a_uhs50_card_and_is_no_finding():
    assert sd_bus_findings(_bus("sd uhs DDR50"), _card("U1"), PI5) == []


def test_a_uhs_card_at_high_speed_or_sdr12_fell_back():
    (finding,) = sd_bus_findings(_bus("sd high-speed"), _card("U3"), PI5)
    assert finding.cap_bytes_per_second == 25e6
    (slowest,) = sd_bus_findings(_bus("ultra high speed SDR12 SDHC"), _card("U1"), PI5)
    assert slowest.cap_bytes_per_second == 12.5e6


def test_a_card_without_uhs_at_high_speed_is_no_finding():
    assert sd_bus_findings(_bus("sd high-speed"), _card(None), PI5) == []


def test_a_pi_5_link_at_gen_1_points_to_the_cable_not_the_gen_3_line():
    link = PcieLink("2.5 GT/s PCIe", 1, "8.0 GT/s PCIe", 4)
    (finding,) = pcie_findings(link, PI5)
    assert "(Gen 1)" in finding.what and finding.fix.startswith("reseat the flat cable")
    assert finding.cap_bytes_per_second == pytest.approx(250e6)
    assert pcie_findings(PcieLink("8.0 GT/s PCIe", 1, "8.0 GT/s PCIe", 4), PI5) == []
    assert pcie_findings(PcieLink("5.0 GT/s PCIe", 1, "8.0 GT/s PCIe", 4), "Radxa ROCK 5 ITX") == []
