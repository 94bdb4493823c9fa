#!/bin/sh
# Install flashmark on Debian, Ubuntu, Raspberry Pi OS or Armbian with the system Python.
#
#   ./install.sh          fio and flashmark; `flashmark` and `sudo flashmark` both work after it
#   ./install.sh --dev    also what the test suite uses (editable install, pytest, ruff, mypy,
#                         and the tools behind the emulated devices and the browser test)
#   ./install.sh --with server,fleet
#                         also optional parts: server (`flashmark serve`), fleet (`flashmark
#                         fleet run`: Ansible); run it again with --with to add one later
#
# Why a virtual environment: Debian 12 and newer mark the system Python as externally managed
# (PEP 668), so `pip install` into it is refused. flashmark gets a venv of its own in
# /opt/flashmark, made with the system Python, and a link in /usr/local/bin, which is on the
# PATH of users and of sudo (Debian's sudoers secure_path includes /usr/local/bin).
set -eu

PREFIX=${FLASHMARK_PREFIX:-/opt/flashmark}
LINK_DIR=/usr/local/bin
here=$(cd "$(dirname "$0")" && pwd)

dev=no
extras=""
expect=""
for argument in "$@"; do
    if [ "$expect" = with ]; then extras=$argument; expect=""; continue; fi
    case "$argument" in
        --dev) dev=yes ;;
        --with) expect=with ;;
        --with=*) extras=${argument#--with=} ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "install.sh: unknown option $argument (see --help)" >&2; exit 2 ;;
    esac
done
# The extras of pyproject.toml that --with takes.
for extra in $(echo "$extras" | tr ',' ' '); do
    case "$extra" in
        server|fleet) ;;
        *) echo "install.sh: --with: no extra '$extra' (server, fleet)" >&2; exit 2 ;;
    esac
done
if [ "$expect" = with ]; then echo "install.sh: --with needs a list: server,fleet" >&2; exit 2; fi

if [ "$(id -u)" != 0 ]; then
    # apt-get and /opt need root; ask once, for the whole script.
    exec sudo "$0" "$@"
fi

packages="fio python3-venv util-linux"
if [ "$dev" = yes ]; then
    # e2fsprogs, mount, procps: emulated devices (loop + ext4 + block throttle); fdisk (sfdisk):
    # partition tables of the device-stack tests;
    # nbdkit, nbdkit-plugin-python, libnbd-bin (nbdfuse), fuse3: emulated flash with caches and
    # fakes (Debian 12 ships nbdfuse in libnbd-bin; "nbdfuse" is only a virtual name there, which
    # dpkg-query never reports installed); chromium: the HTML report and server page tests;
    # postgresql: the results service's tests start a throwaway server (initdb + pg_ctl);
    # f2fs-tools: the power-cut test's f2fs mode; btrfs-progs, xfsprogs, exfatprogs and
    # exfat-fuse (exFAT where the kernel has none): runs on btrfs, XFS and exFAT folders must
    # leave nothing behind, as on ext4 (btrfs lists a folder's entries as they were when its
    # descriptor was opened: tests/system/test_filesystems.py); btrfs also calibrates the disturbance
    # check on idle btrfs folders (tests/bench/test_disturbance.py); openssh-server: the
    # power-cut recorder's tests start a throwaway sshd (tests/powercut/sshd.py);
    # debhelper, dh-python, pybuild-plugin-pyproject, python3-all, python3-setuptools,
    # python3-wheel, lintian, debootstrap: the debian tier builds the Debian package with
    # Debian's own tooling and installs it in a debootstrapped root (tests/debian), never here.
    packages="$packages e2fsprogs fdisk mount procps nbdkit nbdkit-plugin-python libnbd-bin fuse3 chromium postgresql f2fs-tools btrfs-progs xfsprogs exfatprogs exfat-fuse openssh-server"
    packages="$packages debhelper dh-python pybuild-plugin-pyproject python3-all python3-setuptools python3-wheel lintian debootstrap"
fi
# 32-bit ARM has no psycopg-binary wheel: the server extra's plain psycopg loads Debian's libpq.
case "$extras,$(uname -m)" in *server*,armv[67]l) packages="$packages libpq5" ;; esac
missing=""
for package in $packages; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $package"
done
if [ -n "$missing" ]; then
    echo "install.sh: installing$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086  # the list is meant to split into words
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# The system Python, also where another python3 comes first on the PATH (pyenv, conda).
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3)
if [ ! -x "$PREFIX/bin/python" ]; then
    echo "install.sh: creating the virtual environment $PREFIX" >&2
    "$python" -m venv "$PREFIX"
fi
pip="$PREFIX/bin/python -m pip --quiet --disable-pip-version-check"
if [ "$dev" = yes ]; then
    $pip install -e "$here[dev${extras:+,$extras}]"
else
    $pip install "$here${extras:+[$extras]}"
fi
# Where flashmark came from, for the commands its messages give to add an extra
# (flashmark/install_hint.py, MARKER).
printf '%s\n' "$here" > "$PREFIX/flashmark-install-source"
ln -sf "$PREFIX/bin/flashmark" "$LINK_DIR/flashmark"
echo "install.sh: flashmark $("$PREFIX/bin/flashmark" --version | sed 's/.*version //') is $LINK_DIR/flashmark" >&2
