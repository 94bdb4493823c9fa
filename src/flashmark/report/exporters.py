"""The file formats saved results are written in, each dispatched to the result's kind. Every
format is `(results, references) -> str`. JSON writes the saved documents unchanged; the others
decode them and call their kind's renderer: Markdown a section per result, HTML one page of
every kind's section (flashmark.report.html), CSV a table per kind (their columns differ).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flashmark.errors import UsageError
from flashmark.kinds.by_name import kind_named
from flashmark.references.records import ReferenceDevice
from flashmark.result_kind import ResultKind


@dataclass(frozen=True)
class SavedResult:
    """One saved result as an exporter sees it: its kind ("benchmark", "monitor",
    "workload", ...) and its document, as saved."""

    kind: str
    document: Mapping[str, Any]


@dataclass(frozen=True)
class Exporter:
    """A format: its name (`--format`), what people call it, and the file suffixes that
    choose it (`export -o`)."""

    name: str
    title: str
    suffixes: tuple[str, ...]

    def accepts(self, kind: str) -> bool:
        """Whether results of `kind` can be written in this format."""
        return self.name in kind_named(kind).formats()

    def render(self, results: Sequence[SavedResult], references: Sequence[ReferenceDevice]) -> str:
        if self.name == "json":
            documents = [dict(result.document) for result in results]
            return json.dumps(documents[0] if len(documents) == 1 else documents, indent=2) + "\n"
        decoded = [
            (kind, kind.from_document(result.document))
            for result in results
            for kind in (kind_named(result.kind),)
        ]
        if self.name == "html":
            from flashmark.report.html import KindResults, render_report

            order = list(dict.fromkeys(kind.name for kind, _ in decoded))
            return render_report(
                [
                    KindResults(
                        kind_named(name), tuple(r for kind, r in decoded if kind.name == name)
                    )
                    for name in order
                ],
                references,
            )
        if self.name == "md":
            # consecutive results of one kind through their kind's renderer together
            return "\n".join(
                _markdown(kind, [result for _, result in group])
                for kind, group in itertools.groupby(decoded, key=lambda pair: pair[0])
            )
        names = list(dict.fromkeys(kind.name for kind, _ in decoded))
        tables = [
            _csv(kind_named(name), [result for kind, result in decoded if kind.name == name])
            for name in names
        ]
        if len(tables) == 1:
            return tables[0]
        # Kinds have different columns: one table per kind, in the order first asked, each
        # under a row naming its kind and after an empty row, as a spreadsheet shows blocks of
        # one sheet (docs/reports.md, "CSV").
        return "\r\n".join(
            f"{name} results\r\n{table}" for name, table in zip(names, tables, strict=True)
        )


def _csv(kind: ResultKind[Any], results: Sequence[Any]) -> str:
    if kind.csv is None:
        raise UsageError(f"{kind.name} results cannot be written as CSV")
    return kind.csv(results)


def _markdown(kind: ResultKind[Any], results: Sequence[Any]) -> str:
    if kind.markdown is None:
        raise UsageError(f"{kind.name} results cannot be written as Markdown")
    return kind.markdown(results)


_FORMATS = (
    Exporter("md", "Markdown", (".md", ".markdown")),
    Exporter("csv", "CSV", (".csv",)),
    Exporter("json", "JSON", (".json",)),
    Exporter("html", "HTML", (".html", ".htm")),
)
_BY_NAME = {exporter.name: exporter for exporter in _FORMATS}


def exporter(name: str) -> Exporter:
    """The exporter of a format; KeyError for a name `formats()` does not list."""
    return _BY_NAME[name]


def formats() -> tuple[str, ...]:
    """Every format, in the order `--help` lists them."""
    return tuple(_BY_NAME)


def suffix_formats() -> dict[str, str]:
    """File suffix (".md") -> format name ("md")."""
    return {suffix: known.name for known in _FORMATS for suffix in known.suffixes}
