"""The results service: `flashmark serve`, `flashmark upload`, `flashmark token`.

The web framework (the `server` extra) is imported only by `flashmark.server.app` and
`service.py`, which only `flashmark serve` loads. The upload client and what it sends
(`upload.py`, `outgoing.py`) and the storage for SQLite (`storage.py`)
use the standard library, so `upload` and `token` work on a core install; PostgreSQL needs
psycopg.
"""
