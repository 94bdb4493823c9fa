"""Golden outputs of the Markdown, CSV and comparison exporters, made from real runs.

Inputs: the result documents tests/data/report/quick-a1-card.json and standard-fast-card.json,
recorded by tests/data/report/record.py from replayed fio outputs (fixed timestamps: they are
committed). Goldens: tests/data/report/<name>.md, .csv and compare.{md,csv,json}.

After an intended change of an exporter, regenerate the goldens and read the diff:

    FLASHMARK_UPDATE_GOLDEN=1 python3 -m pytest -q tests/report
    git diff tests/data/report
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from flashmark.bench.render.view import WRITERS
from flashmark.bench.run_result import Run
from flashmark.references.loader import find_reference
from flashmark.report.compare import Comparison, build_comparison, comparison_to_document
from flashmark.report.compare_views import comparison_to_csv, comparison_to_markdown
from flashmark.report.exporters import SavedResult, exporter, formats
from tests.report.recorded import DOCUMENT_NAMES, REPORT_DATA, read_golden

UPDATE_ENV = "FLASHMARK_UPDATE_GOLDEN"
# A published A2 card from seed 002: sequential, 4K and workload figures to hold runs against.
REFERENCE = "seed002-sandisk-extreme-pro-a2-64gb"


def check_golden(file_name: str, text: str) -> None:
    """Compare with the golden file byte for byte (CSV keeps its CRLF), or rewrite it."""
    path = REPORT_DATA / file_name
    if os.environ.get(UPDATE_ENV) == "1":
        with path.open("w", encoding="utf-8", newline="") as stream:
            stream.write(text)
        return
    if not path.exists():
        pytest.fail(f"no golden file {path}: run with {UPDATE_ENV}=1 to create it")
    message = f"{path} differs; if the change is intended, regenerate with {UPDATE_ENV}=1"
    assert text == read_golden(file_name), message


@pytest.mark.parametrize("name", DOCUMENT_NAMES)
@pytest.mark.parametrize("suffix", ["md", "csv"])
def test_markdown_and_csv_of_a_recorded_run(runs: dict[str, Run], name: str, suffix: str) -> None:
    write = WRITERS.markdown if suffix == "md" else WRITERS.csv
    check_golden(f"{name}.{suffix}", write([runs[name]]))


def _comparison(runs: dict[str, Run]) -> Comparison:
    return build_comparison([runs[name] for name in DOCUMENT_NAMES], [find_reference(REFERENCE)])


def _comparison_json(comparison: Comparison) -> str:
    return json.dumps(comparison_to_document(comparison), indent=2, ensure_ascii=False) + "\n"


# The comparison's views, by the suffix of their golden file.
VIEWS = {"md": comparison_to_markdown, "csv": comparison_to_csv, "json": _comparison_json}


@pytest.mark.parametrize("suffix", sorted(VIEWS))
def test_comparison_of_two_runs_and_a_reference(runs: dict[str, Run], suffix: str) -> None:
    check_golden(f"compare.{suffix}", VIEWS[suffix](_comparison(runs)))


# -- the exporter registry: every format `show`, `export` and `report` write has a golden ------

# Golden file of each registered format, made from both recorded runs (one document each).
REGISTRY_GOLDENS = {name: f"two-runs.{name}" for name in ("md", "csv", "json", "html")}


def test_every_registered_format_has_a_golden_file() -> None:
    assert set(formats()) == set(REGISTRY_GOLDENS), "a new exporter needs a golden test here"


@pytest.mark.parametrize("format_name", sorted(REGISTRY_GOLDENS))
def test_registered_exporter_output_of_two_recorded_runs(
    documents: dict[str, dict[str, Any]], format_name: str
) -> None:
    results = [SavedResult("benchmark", documents[name]) for name in DOCUMENT_NAMES]
    references = [find_reference(REFERENCE)] if format_name == "html" else []
    check_golden(REGISTRY_GOLDENS[format_name], exporter(format_name).render(results, references))


def test_references_in_a_comparison_are_cited_not_named_by_file(runs: dict[str, Run]) -> None:
    comparison = _comparison(runs)
    for text in (comparison_to_markdown(comparison), comparison_to_csv(comparison)):
        assert ".txt" not in text
    assert '"Performance impact of MMC storage used on SBC" (2018)' in comparison_to_markdown(
        comparison
    )
