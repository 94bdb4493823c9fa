"""fio, the I/O engine: job files (jobs), the one runner (runner), output parsing (parse)."""
