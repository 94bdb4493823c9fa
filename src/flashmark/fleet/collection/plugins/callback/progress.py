"""A callback of the flashmark.fleet collection: each board's progress as JSON lines, for
`flashmark fleet run` (which shows one line a board) or any other program that follows a run.

Enabled by name (ANSIBLE_CALLBACKS_ENABLED=flashmark.fleet.progress) beside the usual stdout
callback; it writes nothing unless FLASHMARK_FLEET_EVENTS names a file. Each line is one of:

    {"event": "start", "host": H, "task": T}                 a flashmark task began on H
    {"event": "ok"|"failed"|"skipped", "host": H, "task": T,
     "outcome": {...} or absent, "message": M}                ... and ended; `outcome` when the
                                                              task set flashmark_outcome,
                                                              `message` why it failed
    {"event": "unreachable", "host": H, "task": T, "message": M}
    {"event": "end"}                                          the playbook is done

Every line also has "time": when it was written (seconds since the epoch).

Only tasks whose name starts with "flashmark" are reported; a task run with no_log reports its
state and nothing of its result.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: progress
type: aggregate
short_description: each board's progress in flashmark's fleet playbook, as JSON lines
description:
  - Appends one JSON line per flashmark task start and result to the file that the
    environment variable FLASHMARK_FLEET_EVENTS names; does nothing without it.
requirements:
  - enable it in callbacks_enabled (ANSIBLE_CALLBACKS_ENABLED=flashmark.fleet.progress)
"""

EVENTS_ENV = "FLASHMARK_FLEET_EVENTS"


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "flashmark.fleet.progress"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._path = os.environ.get(EVENTS_ENV) or None

    def _emit(self, event: dict[str, Any]) -> None:
        if self._path is None:
            return
        event = {**event, "time": round(time.time(), 3)}
        line = json.dumps(event, default=str, ensure_ascii=False) + "\n"
        with open(self._path, "a", encoding="utf-8") as stream:
            stream.write(line)

    @staticmethod
    def _name(task: Any) -> str:
        return str(getattr(task, "name", "") or "")

    def _result(self, state: str, result: Any) -> None:
        task = self._name(result._task)
        if not task.startswith("flashmark"):
            return
        event: dict[str, Any] = {"event": state, "host": result._host.get_name(), "task": task}
        answer = result._result if isinstance(result._result, dict) else {}
        facts = answer.get("ansible_facts")
        if isinstance(facts, dict) and isinstance(facts.get("flashmark_outcome"), dict):
            event["outcome"] = facts["flashmark_outcome"]
        if state == "failed":  # why, in the task's words (censored when it ran with no_log)
            lines = [line for line in str(answer.get("stderr", "")).splitlines() if line.strip()]
            event["message"] = lines[-1] if lines else str(answer.get("msg", ""))
        self._emit(event)

    def v2_runner_on_start(self, host: Any, task: Any) -> None:
        name = self._name(task)
        if name.startswith("flashmark"):
            self._emit({"event": "start", "host": host.get_name(), "task": name})

    def v2_runner_on_ok(self, result: Any) -> None:
        self._result("ok", result)

    def v2_runner_on_failed(self, result: Any, ignore_errors: bool = False) -> None:
        self._result("failed", result)

    def v2_runner_on_skipped(self, result: Any) -> None:
        self._result("skipped", result)

    def v2_runner_on_unreachable(self, result: Any) -> None:
        message = result._result.get("msg", "") if isinstance(result._result, dict) else ""
        self._emit(
            {
                "event": "unreachable",
                "host": result._host.get_name(),
                "task": self._name(result._task),
                "message": str(message),
            }
        )

    def v2_playbook_on_stats(self, stats: Any) -> None:
        self._emit({"event": "end"})
