from flashmark.doctor.host import throttling_findings
from flashmark.probe.environment import decode_throttled


def test_under_voltage_since_boot_is_a_finding() -> None:
    (finding,) = throttling_findings(decode_throttled("throttled=0x10000"))
    assert "under-voltage since boot" in finding.what


def test_under_voltage_and_throttling_now_are_two_findings() -> None:
    findings = throttling_findings(decode_throttled("throttled=0x50005"))
    assert [f.what.split(" (")[0] for f in findings] == ["under-voltage now", "CPU throttled"]


def test_a_clean_board_has_no_finding() -> None:
    assert throttling_findings(decode_throttled("throttled=0x0")) == []
