"""The floors of docs/design.md, held against the code: imports point down, never up."""

from __future__ import annotations

import ast
from pathlib import Path

import flashmark

SOURCE = Path(flashmark.__file__).resolve().parent

# Top floor first; a module may import from its own floor's package or any floor below.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("__main__", "entry", "cli"),
    ("report", "server", "fleet"),
    ("kinds",),
    ("powercut",),
    ("bench",),
    ("surface", "capacity"),
    ("workloads",),
    ("monitor", "probe"),
    ("result_kind",),
    ("fio", "history", "references", "testing"),
    ("system",),
    ("errors", "units", "stats", "codec", "spreadsheet", "markdown", "__init__"),
)
FLOOR_OF = {name: level for level, names in enumerate(FLOORS) for name in names}


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("flashmark"):
            if node.module == "flashmark":
                found += [f"flashmark.{alias.name}" for alias in node.names]
            else:
                found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.startswith("flashmark.")]
    return found


def test_every_package_has_a_floor() -> None:
    packages = {
        path.stem if path.is_file() else path.name
        for path in SOURCE.iterdir()
        if (path.suffix == ".py" or (path.is_dir() and (path / "__init__.py").exists()))
    }
    assert packages <= set(FLOOR_OF), f"give these a floor: {sorted(packages - set(FLOOR_OF))}"


def test_no_import_runs_up_a_floor() -> None:
    upward = []
    for path in sorted(SOURCE.rglob("*.py")):
        module = ".".join(("flashmark", *path.relative_to(SOURCE).with_suffix("").parts))
        own = FLOOR_OF[_package(module)]
        for imported in _imports(path):
            target = _package(imported)
            if target in FLOOR_OF and FLOOR_OF[target] < own:
                upward.append(f"{module} imports {imported}")
    assert upward == []
