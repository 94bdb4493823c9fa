"""flashmark: a storage benchmark for single-board computers, built on fio."""

# The one place the version is written: pyproject.toml reads it from here (setuptools
# `dynamic = ["version"]`). A literal rather than importlib.metadata, which costs ~10 ms of
# start-up on every command.
__version__ = "0.1.0"
