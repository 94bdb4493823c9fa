"""flashmark: a storage benchmark for single-board computers, built on fio."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("flashmark")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+source"
