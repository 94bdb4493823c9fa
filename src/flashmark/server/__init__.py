"""The results service: `flashmark serve`, `flashmark upload`, `flashmark token`.

Importing this package costs nothing (its names load when first used): the web framework (the
`server` extra) is imported only by `flashmark.server.app` and `service.py`, which only
`flashmark serve` loads. The upload client and what it
sends (`upload.py`, `outgoing.py` after `allowlist.py`) and the storage for SQLite
(`storage.py`) use the standard library, so `upload` and `token` work on a core install;
PostgreSQL needs psycopg.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flashmark.lazy import face_names, lazy_face

if TYPE_CHECKING:
    from flashmark.server.allowlist import field_table as field_table
    from flashmark.server.campaign_export import campaign_file as campaign_file
    from flashmark.server.campaign_names import campaign_choices as campaign_choices
    from flashmark.server.database_url import is_postgres as is_postgres
    from flashmark.server.database_url import shown as shown
    from flashmark.server.service import ServiceRequest as ServiceRequest
    from flashmark.server.service import prepare_service as prepare_service
    from flashmark.server.service import run_service as run_service
    from flashmark.server.storage import DATABASE_ENV as DATABASE_ENV
    from flashmark.server.storage import open_storage as open_storage
    from flashmark.server.storage import storage_for as storage_for
    from flashmark.server.upload import TOKEN_ENV as TOKEN_ENV
    from flashmark.server.upload import Skipped as Skipped
    from flashmark.server.upload import accepted_schemas as accepted_schemas
    from flashmark.server.upload import send as send
    from flashmark.server.upload import upload_bodies as upload_bodies

_NAMES = {
    ".allowlist": ("field_table",),
    ".campaign_export": ("campaign_file",),
    ".campaign_names": ("campaign_choices",),
    ".database_url": ("is_postgres", "shown"),
    ".service": ("ServiceRequest", "prepare_service", "run_service"),
    ".storage": ("DATABASE_ENV", "open_storage", "storage_for"),
    ".upload": ("TOKEN_ENV", "Skipped", "accepted_schemas", "send", "upload_bodies"),
}
__getattr__ = lazy_face(__name__, _NAMES)
__all__ = face_names(_NAMES)
