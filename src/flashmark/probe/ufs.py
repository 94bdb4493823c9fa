"""UFS: identity and the health descriptor of the UFS host controller's device, from its
descriptors in sysfs (Documentation/ABI/testing/sysfs-driver-ufs). The health values are
encoded as eMMC's (JESD220 UFS 2.1, Health Descriptor): life time 0x01..0x0A = 0-10% ..
90-100% used, 0x0B exceeded; EOL info 0x01 normal, 0x02 warning, 0x03 urgent.
"""

from __future__ import annotations

from pathlib import Path

from flashmark.probe.emmc_health import decode_life_time, decode_pre_eol
from flashmark.probe.model import Health, Unreadable
from flashmark.system.sysroot import SystemRoots

# JEDEC manufacturer IDs of UFS devices, as named in the kernel's include/ufs/ufs_quirks.h
# (UFS_VENDOR_*).
UFS_VENDORS = {
    0x12C: "Micron",
    0x145: "Western Digital",
    0x198: "Toshiba/Kioxia",
    0x1AD: "SK hynix",
    0x1CE: "Samsung",
}


def ufs_vendor(manufacturer_id: str | None) -> str | None:
    try:
        return UFS_VENDORS.get(int(manufacturer_id or "", 0))
    except ValueError:
        return None


def ufs_host_dir(roots: SystemRoots, device_path: str) -> str | None:
    """The sysfs directory (relative) of the UFS host controller above a block device: the
    nearest ancestor that has a health_descriptor or device_descriptor folder."""
    parts = device_path.split("/")
    for end in range(len(parts), 0, -1):
        candidate = "/".join(parts[:end])
        if Path(roots.sys_path(f"{candidate}/device_descriptor")).is_dir():
            return candidate
        if Path(roots.sys_path(f"{candidate}/health_descriptor")).is_dir():
            return candidate
    return None


def read_ufs(
    roots: SystemRoots, host_dir: str
) -> tuple[dict[str, str | None], Health, tuple[Unreadable, ...]]:
    identity = {
        "vendor": roots.read_sys(f"{host_dir}/string_descriptors/manufacturer_name")
        or ufs_vendor(roots.read_sys(f"{host_dir}/device_descriptor/manufacturer_id")),
        "model": roots.read_sys(f"{host_dir}/string_descriptors/product_name"),
        "firmware": roots.read_sys(f"{host_dir}/string_descriptors/product_revision"),
        "serial": roots.read_sys(f"{host_dir}/string_descriptors/serial_number"),
        "manufacturer_id": roots.read_sys(f"{host_dir}/device_descriptor/manufacturer_id"),
        "spec_version": roots.read_sys(f"{host_dir}/device_descriptor/specification_version"),
    }
    unreadable: list[Unreadable] = []
    health_dir = f"{host_dir}/health_descriptor"
    values: dict[str, str | None] = {}
    for name, decoder in (
        ("life_time_estimation_a", decode_life_time),
        ("life_time_estimation_b", decode_life_time),
        ("eol_info", decode_pre_eol),
    ):
        text = roots.read_sys(f"{health_dir}/{name}")
        if text is None:
            values[name] = None
            continue
        try:
            values[name] = decoder(text)
        except ValueError as error:
            values[name] = None
            unreadable.append(Unreadable(name, text, str(error)))
    health = Health(
        life_time_a=values["life_time_estimation_a"],
        life_time_b=values["life_time_estimation_b"],
        pre_eol=values["eol_info"],
        sources=("sysfs health_descriptor",) if any(values.values()) else (),
    )
    return identity, health, tuple(unreadable)
