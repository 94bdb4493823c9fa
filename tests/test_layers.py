"""The floors of docs/design.md, held against the code: imports point down, never up; the
command line reaches the library through its packages' faces only."""

from __future__ import annotations

import ast
import importlib
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
    ("monitor", "probe", "clean"),
    ("result_kind", "views"),
    ("fio", "history", "references", "testing"),
    ("system",),
    ("errors", "units", "stats", "codec", "spreadsheet", "markdown", "lazy", "install_hint"),
    ("__init__",),
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


# What cli/ may import besides packages' faces: the errors it maps to exit statuses, the
# units it parses and the command that adds an extra its messages give.
# `from flashmark import __version__` is the root package's face.
CLI_FOUNDATION = {"flashmark.errors", "flashmark.units", "flashmark.install_hint"}
# The command line draws only its consoles and the progress of a run; results are drawn by the
# renderers of their kinds.
CLI_RICH = {"output.py", "progress.py"}


def _faces() -> list[str]:
    return sorted(
        path.name for path in SOURCE.iterdir() if path.is_dir() and (path / "__init__.py").exists()
    )


def test_the_command_line_imports_only_the_faces_of_packages() -> None:
    faces = set(_faces())
    below = []
    for path in sorted((SOURCE / "cli").rglob("*.py")):
        module = ".".join(("flashmark", *path.relative_to(SOURCE).with_suffix("").parts))
        for imported in _imports(path):
            parts = imported.split(".")
            if parts[:2] == ["flashmark", "cli"] or imported in CLI_FOUNDATION:
                continue
            if len(parts) == 2 and parts[1] in faces:
                continue  # a package's face: `from flashmark.surface import run_surface`
            if len(parts) == 2 and not (SOURCE / f"{parts[1]}.py").exists():
                continue  # a name of the root package (__version__)
            below.append(f"{module} imports {imported}")
    assert below == []


def test_the_command_line_draws_only_consoles_and_progress() -> None:
    drawing = sorted(
        path.name
        for path in (SOURCE / "cli").rglob("*.py")
        if any(
            (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "rich")
            or (
                isinstance(node, ast.Import)
                and any(alias.name.split(".")[0] == "rich" for alias in node.names)
            )
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    )
    assert set(drawing) <= CLI_RICH, drawing


def _face_names(package: str) -> tuple[set[str], set[str]]:
    """The names a face lists for the type checker (its TYPE_CHECKING imports) and at run time
    (its `_NAMES`), when it loads names lazily."""
    tree = ast.parse((SOURCE / package / "__init__.py").read_text(encoding="utf-8"))
    typed: set[str] = set()
    lazy: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            typed |= {
                alias.asname or alias.name
                for statement in node.body
                if isinstance(statement, ast.ImportFrom)
                for alias in statement.names
            }
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "_NAMES":
            table = ast.literal_eval(node.value)
            lazy |= {name for names in table.values() for name in names}
    return typed, lazy


def test_every_name_of_every_face_loads_and_is_typed() -> None:
    for package in _faces():
        typed, lazy = _face_names(package)
        if not lazy:
            continue  # a face that imports what it names
        assert typed == lazy, f"flashmark.{package}: typed and loaded names differ"
        face = importlib.import_module(f"flashmark.{package}")
        for name in sorted(lazy):
            assert getattr(face, name) is not None, f"flashmark.{package}.{name}"


def test_no_name_of_a_face_is_also_a_module_of_its_package() -> None:
    # Once its module is imported, Python sets the module as the package's attribute of that
    # name, which then hides the face's lazily loaded name of the same spelling.
    clashes = []
    for package in _faces():
        typed, lazy = _face_names(package)
        modules = {path.stem for path in (SOURCE / package).glob("*.py")}
        modules |= {path.name for path in (SOURCE / package).iterdir() if path.is_dir()}
        clashes += [f"flashmark.{package}.{name}" for name in sorted((typed | lazy) & modules)]
    assert clashes == []
