"""Emulated devices whose true behaviour is known, for the tests and the benchmarks: loop devices
under the kernel block throttle (throttle.py), flash cards with programmed behaviour (flash/,
docs/emulated-flash.md), the real flashmark CLI run inside them (runs.py), and their own tests."""
