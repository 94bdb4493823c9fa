"""The service's defences one by one, without a server: failed tokens slowed per address in
bounded memory, passwords out of every database name and message, CSV cells no spreadsheet
runs, an SQLite file removed or replaced under open connections."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flashmark.server.database_url import is_postgres, redacted, shown
from flashmark.server.intake import accept
from flashmark.server.storage import Search, StorageError, open_storage
from flashmark.spreadsheet import text_cell
from tests.server.conftest import backup, recorded, variant


def test_failed_tokens_are_allowed_ten_times_then_one_every_ten_seconds():
    pytest.importorskip("starlette", reason="the server extra is not installed")
    from flashmark.server.app import TokenBuckets, address_key

    failures = TokenBuckets(per_minute=6, burst=10, key=address_key)
    for attempt in range(10):
        assert failures.wait_s("192.0.2.1", 100.0) == 0.0, attempt
        failures.take("192.0.2.1", 100.0)
    assert failures.wait_s("192.0.2.1", 100.0) == pytest.approx(10.0)
    assert failures.wait_s("192.0.2.2", 100.0) == 0.0  # another address is not slowed
    assert failures.wait_s("192.0.2.1", 110.0) == 0.0  # one more attempt 10 s later
    failures.take("192.0.2.1", 110.0)
    assert failures.wait_s("192.0.2.1", 110.0) == pytest.approx(10.0)


def test_failed_tokens_keep_bounded_memory_and_count_ipv6_per_64():
    pytest.importorskip("starlette", reason="the server extra is not installed")
    from flashmark.server.app import TokenBuckets, address_key

    failures = TokenBuckets(per_minute=6, burst=1, size=3, key=address_key)
    for host in range(5):
        failures.take(f"192.0.2.{host}", 0.0)
    assert list(failures.buckets) == ["192.0.2.2", "192.0.2.3", "192.0.2.4"]
    failures.take("2001:db8:1:2::1", 0.0)
    assert failures.wait_s("2001:db8:1:2:ffff::9", 0.0) > 0  # the same /64
    assert failures.wait_s("2001:db8:1:3::1", 0.0) == 0.0


@pytest.mark.parametrize(
    ("database", "secrets"),
    [
        ("postgresql://u:S3cret@db.example/flashmark", ["S3cret"]),
        ("postgres://u:S3cret@db.example:5432/flashmark?sslmode=require", ["S3cret"]),
        ("postgresql://u:p%40ss%2Fw0rd@db.example/x", ["p%40ss%2Fw0rd", "p@ss/w0rd"]),
        ("postgresql://u@db.example/x?sslmode=require&password=S3cret", ["S3cret"]),
        ("host=db.example user=u password=S3cret dbname=x", ["S3cret"]),
        ("host=db.example password='S3 cr\\'et' dbname=x", ["S3 cr\\'et", "S3 cr'et"]),
    ],
)
def test_a_password_is_out_of_the_name_and_of_any_message(database, secrets):
    assert is_postgres(database)
    message = f"connection to {database} failed (password {secrets[-1]}, {database})"
    for text in (shown(database), redacted(message, database)):
        for secret in secrets:
            assert secret not in text, text
    assert "db.example" in shown(database)


def test_an_sqlite_path_is_no_postgres_and_shown_as_it_is():
    assert not is_postgres("/srv/flashmark/server.sqlite3")
    assert shown("/srv/flashmark/server.sqlite3") == "/srv/flashmark/server.sqlite3"
    assert redacted("at postgresql://a:b@c/d") == "at postgresql://a:***@c/d"


@pytest.mark.parametrize(
    ("text", "cell"),
    [
        ("Kingston", "Kingston"),
        ("2026-11-24T08:00:00Z", "2026-11-24T08:00:00Z"),
        ("rw,relatime", "rw,relatime"),
        ("=1+1", "'=1+1"),
        (" @SUM(A1)", "' @SUM(A1)"),
        ("a;=1+1", "a;'=1+1"),
        ('a"-2', "a\"'-2"),
        ("\uff1d1", "'\uff1d1"),
    ],
)
def test_csv_text_cells(text, cell):
    assert text_cell(text) == cell


@given(st.text(alphabet=st.sampled_from("=+-@\t\r\n,;|\"' ax\uff1d"), max_size=12))
def test_no_csv_cell_starts_a_formula_at_any_separator(text):
    cell = text_cell(text)
    assert cell.replace("'", "") == text.replace("'", "")  # only quotes are added
    for boundary in ("", ",", ";", "\t", "|", "\r", "\n", '"'):
        parts = cell.split(boundary) if boundary else [cell]
        for part in parts[1:] if boundary else parts:
            assert not part.lstrip(" ").startswith(("=", "+", "-", "@", "\t", "\r", "\uff1d"))


def _started(storage, index: int) -> int:
    token = storage.token_for(storage.create_token(f"t{index}"))
    stored = storage.add_result(accept(variant(recorded("quick-a1-card"), index)), token.id)
    return int(stored.id)


def test_an_sqlite_file_removed_or_replaced_is_never_written_and_comes_back(tmp_path: Path):
    folder = tmp_path / "db"
    folder.mkdir()
    path = folder / "server.sqlite3"
    with contextlib.closing(open_storage(str(path))) as storage:
        _started(storage, 1)
        copy = tmp_path / "copy.sqlite3"
        backup(path, copy)
        shutil.rmtree(folder)
        with pytest.raises(StorageError, match="is missing"):
            _started(storage, 2)
        with pytest.raises(StorageError, match="is missing"):
            storage.search(Search())
        assert not folder.exists()  # nothing was created
        folder.mkdir()
        (folder / "server.sqlite3").write_bytes(b"garbage" * 100)
        with pytest.raises(StorageError, match="not a service database"):
            storage.search(Search())
        os.replace(copy, path)
        assert [row.id for row in storage.search(Search())] == [1]
        assert _started(storage, 3) == 2
