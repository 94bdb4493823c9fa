"""What a `--database` names, and how it is shown: never with its password.

PostgreSQL is named by a URL (`postgresql://` or `postgres://`, the password in the user part
or as a `password=` query parameter, either percent-encoded) or by a key=value connection
string (`host=db user=u password=secret`, libpq's conninfo:
https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING); anything else is
an SQLite file. `shown` is the name to print; `redacted` takes the password out of any text
(an error of psycopg or libpq may quote the connection string), in every form it was given.
"""

from __future__ import annotations

import re
import urllib.parse

MASK = "***"
_URL_SCHEMES = ("postgresql://", "postgres://")
# key=value connection strings start with a keyword and '=' (libpq keywords are lower case).
_CONNINFO = re.compile(r"\s*[a-z_]+\s*=")
# A password in a URL's user part, whatever the scheme; and password=VALUE, quoted or not.
_URL_PASSWORD = re.compile(r"(://[^:/?#@\s]*:)[^@\s]*(@)")
_KEY_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&'\"]*)", re.IGNORECASE)


def is_postgres(database: str) -> bool:
    return database.startswith(_URL_SCHEMES) or bool(_CONNINFO.match(database))


def passwords(database: str) -> list[str]:
    """Every form the password of `database` may take in a message, longest first."""
    found: list[str] = []
    if database.startswith(_URL_SCHEMES):
        parts = urllib.parse.urlsplit(database)
        if parts.password:
            found.append(parts.password)
        for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
            if name == "password" and value:
                found.append(value)
        for match in re.finditer(r"(?:^|&)password=([^&]*)", parts.query):
            found.append(match.group(1))
    for match in _KEY_PASSWORD.finditer(database):
        value = match.group(2)
        if value.startswith("'"):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        found.append(value)
    forms = set()
    for value in found:
        if value:
            decoded = urllib.parse.unquote(value)
            forms.update({value, decoded, urllib.parse.quote(decoded, safe="")})
    return sorted(forms, key=len, reverse=True)


def redacted(text: str, database: str = "") -> str:
    """`text` with the password of `database` (in any of its forms) and anything that looks
    like a password in a URL or a key=value string replaced by ***."""
    for secret in passwords(database):
        if len(secret) >= 3:  # a shorter one would mask letters of every word, and tells little
            text = text.replace(secret, MASK)
    text = _URL_PASSWORD.sub(rf"\g<1>{MASK}\g<2>", text)
    return _KEY_PASSWORD.sub(rf"\g<1>{MASK}", text)


def shown(database: str) -> str:
    """The database as messages name it."""
    return redacted(database, database)
