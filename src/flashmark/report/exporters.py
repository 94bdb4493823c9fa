"""The exporter registry: a file format -> the one function that writes it.

Every exporter has the same signature, `(results, references) -> str`: the saved results in the
order asked (their kind and document, as the history keeps them) and the published references
the user chose (most formats ignore them). The CLI (`show --format`, `export`, `report`) looks
a format up here and never branches on it; a new result kind or format (surface scans,
capacity probes) is one `register(Exporter(...))` call in the module that renders it, plus a
golden test (tests/report/test_golden.py).

Why documents, not Runs: JSON writes the saved document unchanged (byte for byte what `run
--json` printed), and other result kinds have other types; each exporter decodes what it needs.
Nothing here imports the history (`store`) or the I/O monitor's sampler.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flashmark.bench.document import document_to_run
from flashmark.bench.model import Run
from flashmark.references import ReferenceDevice

BENCHMARK = "benchmark"


@dataclass(frozen=True)
class SavedResult:
    """One saved result as an exporter sees it: its kind ("benchmark", "monitor",
    "workload", ...) and its document, as saved."""

    kind: str
    document: Mapping[str, Any]


Render = Callable[[Sequence[SavedResult], Sequence[ReferenceDevice]], str]


@dataclass(frozen=True)
class Exporter:
    """A format: its name (`--format`), the file suffixes that choose it (`export -o`), the
    result kinds it can write (None: every kind) and its render function."""

    name: str
    suffixes: tuple[str, ...]
    kinds: frozenset[str] | None
    render: Render

    def accepts(self, kind: str) -> bool:
        return self.kinds is None or kind in self.kinds


_REGISTRY: dict[str, Exporter] = {}


def register(exporter: Exporter) -> Exporter:
    """Add a format; a name or suffix taken twice is a programming error, caught at import."""
    if exporter.name in _REGISTRY:
        raise ValueError(f"format {exporter.name!r} is registered twice")
    taken = {suffix for known in _REGISTRY.values() for suffix in known.suffixes}
    if clash := taken.intersection(exporter.suffixes):
        raise ValueError(f"suffix {sorted(clash)[0]!r} already chooses another format")
    _REGISTRY[exporter.name] = exporter
    return exporter


def exporter(name: str) -> Exporter:
    """The exporter of a format; KeyError for a name `formats()` does not list."""
    return _REGISTRY[name]


def formats() -> tuple[str, ...]:
    """Every registered format, in the order registered."""
    return tuple(_REGISTRY)


def suffix_formats() -> dict[str, str]:
    """File suffix (".md") -> format name ("md")."""
    return {suffix: known.name for known in _REGISTRY.values() for suffix in known.suffixes}


def benchmark_runs(results: Sequence[SavedResult]) -> list[Run]:
    """The benchmark runs among `results`, decoded; the CLI has checked every kind already."""
    for result in results:
        if result.kind != BENCHMARK:
            raise ValueError(f"a {result.kind} result is not a benchmark run")
    return [document_to_run(dict(result.document)) for result in results]


# -- the formats ------------------------------------------------------------------------------


def export_json(results: Sequence[SavedResult], references: Sequence[ReferenceDevice]) -> str:
    """The saved documents unchanged: the document itself for one result, a list for several."""
    documents = [dict(result.document) for result in results]
    return json.dumps(documents[0] if len(documents) == 1 else documents, indent=2) + "\n"


SURFACE = "surface"


def _surfaces(results: Sequence[SavedResult], name: str) -> list[Any] | None:
    """The surface scans among `results`, decoded, when they are all surface scans; None when
    none is. Scans and runs have different tables: one file holds one kind."""
    scans = [r for r in results if r.kind == SURFACE]
    if not scans:
        return None
    if len(scans) != len(results):
        from flashmark.errors import UsageError

        raise UsageError(
            f"surface scans and other results cannot share one {name} file: export them separately"
        )
    from flashmark.surface.result import from_document

    return [from_document(dict(r.document)) for r in scans]


def export_markdown(results: Sequence[SavedResult], references: Sequence[ReferenceDevice]) -> str:
    if (scans := _surfaces(results, "Markdown")) is not None:
        from flashmark.surface.render import surfaces_to_markdown

        return surfaces_to_markdown(scans)
    from flashmark.bench.render.markdown import runs_to_markdown

    return runs_to_markdown(benchmark_runs(results))


def export_csv(results: Sequence[SavedResult], references: Sequence[ReferenceDevice]) -> str:
    if (scans := _surfaces(results, "CSV")) is not None:
        from flashmark.surface.render import surfaces_to_csv

        return surfaces_to_csv(scans)
    from flashmark.bench.render.csv_export import runs_to_csv

    return runs_to_csv(benchmark_runs(results))


def export_html(results: Sequence[SavedResult], references: Sequence[ReferenceDevice]) -> str:
    if (scans := _surfaces(results, "HTML")) is not None:
        # Surface scans have a page of their own (a chart of MB/s over the surface).
        from flashmark.surface.html import render_surface_html

        return render_surface_html(scans)
    # Imported when asked for: pygal and Jinja2 are the heaviest part of report/.
    from flashmark.bench.render.html import render_html_report

    return render_html_report(benchmark_runs(results), references)


_RUNS = frozenset({BENCHMARK, SURFACE})  # surface scans: their own tables and page
register(Exporter("md", (".md", ".markdown"), _RUNS, export_markdown))
register(Exporter("csv", (".csv",), _RUNS, export_csv))
register(Exporter("json", (".json",), None, export_json))
register(Exporter("html", (".html", ".htm"), _RUNS, export_html))
