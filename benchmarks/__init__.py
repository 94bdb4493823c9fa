"""Benchmarks: scripts that print tables (truth, measured, error, time); they assert nothing."""
