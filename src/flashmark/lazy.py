"""A package's face that loads what it names when a name is first used (PEP 562's module
`__getattr__`, https://peps.python.org/pep-0562/).

Each package's `__init__` lists its public names by the module that defines them; importing the
package then costs nothing until one of them is used, so that `flashmark --help` and `flashmark
history` do not load the measuring code, rich, or the renderers.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_face(package: str, names: Mapping[str, tuple[str, ...]]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`, whose `names` are {module: (name, ...)}: a module
    of the package as ".name", another by its full name."""
    where = {name: module for module, listed in names.items() for name in listed}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module, package), name)

    return __getattr__


def face_names(names: Mapping[str, tuple[str, ...]]) -> list[str]:
    """Every name a face lists, for its `__all__`."""
    return sorted(name for listed in names.values() for name in listed)
