"""The HTML the pages' repeated parts are written in: results table rows, kept per result."""

from __future__ import annotations

from flashmark.server.intake import HEADLINE_COLUMNS
from flashmark.server.storage import ResultRow
from flashmark.server.views import TableRows, table_row


def test_table_rows_are_kept_by_id_and_only_the_newest_ones():
    def row(result_id: int, board: str) -> ResultRow:
        return ResultRow(
            id=result_id,
            uploaded_at="2026-01-01T00:00:00.000+00:00",
            started_at="2026-01-01T00:00:00+00:00",
            maker="Kingston",
            product="SD64G",
            capacity_bytes=62_000_000_000,
            model_key="sd-9f-0x5449-sd64g-6.1",
            medium="sd",
            board=board,
            profile="quick",
            card_serial=None,
            headlines={column: 1e6 for column in HEADLINE_COLUMNS},
        )

    rows = TableRows(size=2)
    first = rows([row(1, "<b>Pi</b>"), row(2, "Pi 5")])
    assert "&lt;b&gt;Pi&lt;/b&gt;" in first and "<b>" not in first
    assert first == table_row(row(1, "<b>Pi</b>")) + table_row(row(2, "Pi 5"))
    # a stored result never changes: its row is written once (the same board shows)
    assert rows([row(1, "other")]) == table_row(row(1, "<b>Pi</b>"))
    rows([row(3, "Pi 4")])  # 1 was shown last, so 2 goes
    assert rows([row(2, "changed")]) == table_row(row(2, "changed"))
