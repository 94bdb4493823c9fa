"""Console helpers shared by the command modules: where text goes and how JSON is printed.

Results go to stdout; progress, warnings and prompts go to stderr, so `--json` output can be
piped. Nothing outside flashmark.cli prints.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console


def stdout_console() -> Console:
    return Console(file=sys.stdout, highlight=False, soft_wrap=False)


def stderr_console() -> Console:
    return Console(file=sys.stderr, highlight=False, soft_wrap=False)


def print_json(document: Any) -> None:
    sys.stdout.write(json.dumps(document, indent=2, sort_keys=False) + "\n")
    sys.stdout.flush()
