from flashmark.doctor.usb import USB2_BULK_CAP_BYTES_PER_SECOND, usb_findings
from flashmark.probe.model import UsbLink


def _link(speed: int, version: str, driver: str) -> UsbLink:
    return UsbLink(
        port="2-1",
        vendor_id="152d",
        product_id="0578",
        manufacturer=None,
        product=None,
        speed_mbps=speed,
        usb_version=version,
        best_speed_mbps={"2.00": 480, "2.10": 480, "3.20": 5000}[version],
        driver=driver,
    )


def test_a_usb3_device_on_a_480_link_is_capped_by_usb2() -> None:
    (finding,) = usb_findings(_link(480, "3.20", "uas"))
    assert "480 Mb/s" in finding.what
    assert finding.cap_bytes_per_second == USB2_BULK_CAP_BYTES_PER_SECOND


def test_usb_storage_on_a_usb3_device_is_a_finding() -> None:
    (finding,) = usb_findings(_link(5000, "3.20", "usb-storage"))
    assert "usb-storage" in finding.what
    assert finding.cap_bytes_per_second is None


def test_a_healthy_usb3_link_has_no_finding() -> None:
    assert usb_findings(_link(5000, "3.20", "uas")) == []


def test_a_usb2_device_at_480_has_no_finding() -> None:
    assert usb_findings(_link(480, "2.10", "usb-storage")) == []


def test_the_link_fix_names_the_port_the_devices_version_needs() -> None:
    (usb3,) = usb_findings(_link(480, "3.20", "uas"))
    assert usb3.fix == "plug it into a USB 3 (blue) port directly, with a USB 3 cable"
    (usb2,) = usb_findings(_link(12, "2.00", "usb-storage"))  # a high-speed stick at full speed
    assert usb2.what == "USB link at 12 Mb/s, the device (USB 2.00) can do 480 Mb/s"
    assert usb2.fix == "plug it into a USB 2.0 port directly, not through a USB 1.1 hub or cable"
