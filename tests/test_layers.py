"""The floors of docs/design.md, held against the code: imports point down, never up; a
package's `__init__.py` holds its docstring only, so every name is imported from the module that
defines it."""

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
    ("health", "doctor"),
    ("monitor", "probe", "clean"),
    ("result_kind", "views"),
    ("fio", "history", "references"),
    ("system",),
    (
        "errors",
        "units",
        "stats",
        "codec",
        "upload_rules",
        "spreadsheet",
        "markdown",
        "install_hint",
    ),
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


# The command line draws only its consoles and the progress of a run; results are drawn by the
# renderers of their kinds.
CLI_RICH = {"output.py", "progress.py"}


def test_packages_name_nothing_but_their_docstring() -> None:
    # The root package holds the version, and cli/ is the command group itself.
    holding = {SOURCE / "__init__.py", SOURCE / "cli" / "__init__.py"}
    faces = []
    for path in sorted(SOURCE.rglob("__init__.py")):
        body = ast.parse(path.read_text(encoding="utf-8")).body
        code = body[1:] if body and isinstance(body[0], ast.Expr) else body
        if code and path not in holding:
            faces.append(str(path.relative_to(SOURCE)))
    assert faces == []


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
