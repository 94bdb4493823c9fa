from flashmark.doctor.host import governor_findings, throttling_findings
from flashmark.probe.environment import decode_throttled


def test_under_voltage_since_boot_is_a_finding() -> None:
    (finding,) = throttling_findings(decode_throttled("throttled=0x10000"))
    assert "under-voltage since boot" in finding.what


def test_throttling_with_under_voltage_is_the_supplys_and_heat_is_the_coolers() -> None:
    findings = throttling_findings(decode_throttled("throttled=0x50005"))
    assert [f.what.split(" (")[0] for f in findings] == ["under-voltage now"]
    (heat,) = throttling_findings(decode_throttled("throttled=0x80008"))  # soft limit, now
    assert heat.what.startswith("CPU throttled") and "heatsink" in heat.fix
    (capped,) = throttling_findings(decode_throttled("throttled=0x20002"))  # capped, no UV
    assert capped.what.startswith("CPU throttled")


def test_a_clean_board_has_no_finding() -> None:
    assert throttling_findings(decode_throttled("throttled=0x0")) == []


def test_powersave_is_slow_only_under_a_generic_cpufreq_driver() -> None:
    for driver in ("cpufreq-dt", "acpi-cpufreq", "intel_cpufreq", "amd-pstate", None):
        (finding,) = governor_findings(("powersave",), driver)
        assert finding.what == "CPU governor powersave"
    # intel_pstate and amd-pstate-epp in active mode scale "powersave" with the load.
    assert governor_findings(("powersave",), "intel_pstate") == []
    assert governor_findings(("powersave",), "amd-pstate-epp") == []
    assert governor_findings(("schedutil",), "cpufreq-dt") == []
