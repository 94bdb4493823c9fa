from flashmark.doctor.host import throttling_findings
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
