"""Fixtures of the report tests: the recorded runs, as documents, as Runs and in a history."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import click
import pytest

from flashmark.bench.document import document_to_run
from flashmark.bench.run_result import Run
from flashmark.history.store import History
from tests.report.recorded import DISKSTATS, DOCUMENT_NAMES, load_document


@pytest.fixture(scope="session")
def documents() -> dict[str, dict[str, Any]]:
    return {name: load_document(name) for name in DOCUMENT_NAMES}


@pytest.fixture(scope="session")
def runs(documents: dict[str, dict[str, Any]]) -> dict[str, Run]:
    return {name: document_to_run(document) for name, document in documents.items()}


@pytest.fixture
def history_db(tmp_path: Path, documents: dict[str, dict[str, Any]]) -> Path:
    """A fresh history holding the recorded runs as ids 1 and 2."""
    path = tmp_path / "history.sqlite3"
    history = History(path)
    for index, name in enumerate(DOCUMENT_NAMES, start=1):
        document = documents[name]
        saved = history.save(
            kind="benchmark",
            target=document["target"]["given"],
            label=document["settings"]["profile"],
            document=document,
        )
        assert saved == index == document["id"]
    return path


@pytest.fixture
def procfs(tmp_path: Path) -> Path:
    """A recorded /proc whose diskstats never change: `monitor` sees an idle mmcblk0."""
    root = tmp_path / "proc"
    root.mkdir()
    shutil.copy(DISKSTATS / "kernel-4.19-18-fields.t0", root / "diskstats")
    return root


@pytest.fixture(scope="session")
def cli() -> click.Group:
    """The flashmark command group, every command registered."""
    from flashmark.cli import main

    return main
