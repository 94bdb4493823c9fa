"""The kinds a command loads by name alone are the registry's saved kinds, each under its name."""

from flashmark.kinds.by_name import KIND_MODULES, kind_named
from flashmark.kinds.registry import KINDS


def test_every_saved_kind_is_found_by_its_name_and_nothing_else_is() -> None:
    assert set(KIND_MODULES) == {kind.name for kind in KINDS}
    for kind in KINDS:
        assert kind_named(kind.name) is kind
