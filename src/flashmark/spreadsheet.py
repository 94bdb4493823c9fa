"""Text for the cells of a CSV file that a spreadsheet shows as text instead of running it as a
formula ("CSV injection"), whichever separator the spreadsheet splits the file at.

OWASP, CSV Injection (https://owasp.org/www-community/attacks/CSV_Injection): a cell must not
begin with =, +, -, @, tab or carriage return, nor may one follow a separator or quote inside
it. So a leading ' goes before the text (after blanks) and wherever one follows a separator, a
line end or a quote; the full-width forms of the four signs count too. Numbers never come here.
"""

from __future__ import annotations

import re

FORMULA_START = "=+-@\t\r\uff1d\uff0b\uff0d\uff20"
# What a spreadsheet may cut a cell at when it opens a CSV file: the separators it offers
# (comma, semicolon, tab, pipe), the line ends, and the quotes around a cell.
CELL_BOUNDARIES = ",;\t|\r\n\"'"
_LEADING = re.compile(f"^[ ]*[{re.escape(FORMULA_START)}]")
# Where a cell may begin inside the text: after a boundary (and blanks), before a sign. Both
# sides are lookarounds, so a tab that ends one cell and starts the next is seen as both.
_INNER = re.compile(f"(?<=[{re.escape(CELL_BOUNDARIES)}])[ ]*(?=[{re.escape(FORMULA_START)}])")


def text_cell(text: str) -> str:
    """`text` as a CSV cell that no spreadsheet runs (unchanged when nothing could start a
    formula: names, dates, paths)."""
    guarded = _INNER.sub(lambda blanks: blanks.group() + "'", text)
    if _LEADING.match(guarded):
        guarded = "'" + guarded
    return guarded
