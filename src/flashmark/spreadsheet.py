"""Text for the cells of a CSV file that a spreadsheet shows as text instead of running it as a
formula ("CSV injection"), whichever separator the spreadsheet splits the file at.

OWASP, CSV Injection (https://owasp.org/www-community/attacks/CSV_Injection): a cell must not
begin with =, +, -, @, tab or carriage return, and "it is not sufficient to make sure that the
untrusted user input does not start with these characters": a field separator (',' or ';')
or a quote in the text lets an attacker start a new cell in its middle. So a text gets a
leading ' when it starts with one of them (after blanks: a spreadsheet may trim them), and
so does every place in it where one follows a separator, a line end or a quote. The
full-width forms of the four signs (U+FF1D...) are treated alike: some spreadsheets read them
so. Numbers are written as numbers, never through here.
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
