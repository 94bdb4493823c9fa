"""Filters of the flashmark.fleet collection: the campaign's job, and each board's outcome.

Jinja would say these in long expressions; here they are Python, read and tested as such.

    flashmark_plan(command_result)                 -> the board's plan: {job_hash, job} or {}
    flashmark_needs_install(command_result, pin)   -> flashmark missing there, or another version
    flashmark_reference(plans, service_answer)     -> the campaign's {job_hash, job}
    flashmark_refusal(plan, reference, pins...)    -> why this board cannot join, or ""
    flashmark_outcome(run_result, upload_result)   -> what became of the board's run
    flashmark_lines(boards, hostvars)              -> one line a board, for the report
    flashmark_to_run_again(boards, hostvars)       -> the boards whose result is not whole
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

DOCUMENTATION = """
name: fleet
short_description: the flashmark fleet role's decisions, as filters
description: Reads flashmark's JSON answers and decides which boards join a campaign.
"""


def flashmark_plan(result: dict[str, Any]) -> dict[str, Any]:
    """`flashmark run --job-hash`'s answer ({job_hash, job}), or {} when it failed."""
    if not isinstance(result, dict) or result.get("rc") != 0:
        return {}
    try:
        plan = json.loads(result.get("stdout", ""))
    except ValueError:
        return {}
    if not isinstance(plan, dict) or not isinstance(plan.get("job_hash"), str):
        return {}
    return {"job_hash": plan["job_hash"], "job": plan.get("job") or {}}


def flashmark_needs_install(result: dict[str, Any], version: str = "") -> bool:
    """Whether a board's plan says flashmark is missing there (its command was not found),
    or is another version than `version`. A plan that failed for another reason (a target
    that is not there) does not call for an install."""
    if not isinstance(result, dict) or result.get("skipped"):
        return False
    plan = flashmark_plan(result)
    other = bool(version) and bool(plan) and plan["job"].get("flashmark_version") != version
    # A flashmark from before fleets does not know --job-hash (a usage error, exit 2).
    older = result.get("rc") == 2 and "--job-hash" in str(result.get("stderr", ""))
    return _not_found(result) or other or older


def _not_found(result: dict[str, Any]) -> bool:
    """The command could not be started because it is not there: the command module answers
    rc 2 (ENOENT) with nothing on stdout or stderr ("Error executing command." in
    ansible-core 2.19, "[Errno 2] No such file or directory" before); a shell, 127."""
    if "No such file or directory" in str(result.get("msg", "")) or result.get("rc") == 127:
        return True
    silent = not str(result.get("stdout", "")).strip() and not str(result.get("stderr", "")).strip()
    return result.get("rc") == 2 and silent and bool(result.get("msg"))


def flashmark_reference(plans: list[dict[str, Any]], service: dict[str, Any]) -> dict[str, Any]:
    """The job every board must run: the campaign's on the service when it exists (a board run
    again joins what is there), else the one most boards planned (on a tie, that of the first
    of them in inventory order)."""
    if isinstance(service, dict) and service.get("status") == 200:
        answer = service.get("json") or {}
        return {"job_hash": answer.get("job_hash"), "job": answer.get("job") or {}}
    planned = [plan for plan in plans if isinstance(plan, dict) and plan.get("job_hash")]
    if not planned:
        return {}
    counts = Counter(plan["job_hash"] for plan in planned)
    most = max(counts.values())
    return next(plan for plan in planned if counts[plan["job_hash"]] == most)


def flashmark_refusal(
    plan: dict[str, Any],
    reference: dict[str, Any],
    version: str = "",
    fio_version: str = "",
    planned: dict[str, Any] | None = None,
) -> str:
    """Why a board with this plan cannot join the campaign, in words; "" when it can.
    `planned` is the plan command's own result, for its error when there is no plan."""
    if not plan:
        if isinstance(planned, dict) and _not_found(planned):
            command = str(planned.get("cmd", "flashmark")).split(" ", 1)[0]
            return (
                f"flashmark is not installed here ({command} was not found): set "
                "flashmark_wheel to a flashmark wheel (or flashmark_pip_args to an index with "
                "it) to install it, or flashmark_command to where it is"
            )
        return _error_of(planned) or "flashmark could not plan the benchmark on this board"
    job = plan.get("job", {})
    if version and job.get("flashmark_version") != version:
        return f"flashmark {job.get('flashmark_version')} on this board, not {version}"
    if fio_version and job.get("fio_version") != fio_version:
        return f"{job.get('fio_version')} on this board, not {fio_version}"
    if reference and plan.get("job_hash") != reference.get("job_hash"):
        theirs = reference.get("job", {})
        differs = [
            f"{key} {job.get(key)!r}, not {theirs.get(key)!r}"
            for key in sorted(set(job) | set(theirs))
            if job.get(key) != theirs.get(key)
        ]
        return (
            f"job hash {plan.get('job_hash')} differs from the campaign's "
            f"{reference.get('job_hash')}: {'; '.join(differs)}"
        )
    return ""


def flashmark_outcome(run: dict[str, Any], upload: dict[str, Any] | None) -> dict[str, Any]:
    """What became of a board's run: uploaded, incomplete (its run stopped after some tests,
    which were kept and uploaded), or failed, with the step and flashmark's own message."""
    document = _document(run)
    local_id = document.get("id") if document else None
    partial = document.get("partial") if document else None
    outcome: dict[str, Any] = {
        "result": local_id,
        "tests": len(document.get("tests", ())) if document else 0,
        "uploaded": None,
        "url": None,
        "seconds": _seconds(run),
    }
    if upload and upload.get("rc") == 0:
        match = re.search(r"as (\d+): (\S+)", upload.get("stdout", ""))
        if match:
            outcome["uploaded"], outcome["url"] = int(match.group(1)), match.group(2)
    run_error = _error_of(run)
    if document is None or local_id is None:
        why = run_error or "the run printed no result"
        return {**outcome, "state": "failed", "step": "measure", "message": why}
    if upload is None or upload.get("rc") != 0:
        why = _error_of(upload) or "not uploaded"
        kept = f"result {local_id} is kept in the board's history"
        return {**outcome, "state": "failed", "step": "upload", "message": f"{why}; {kept}"}
    if partial or run.get("rc") != 0:
        step = partial.get("failed_step") if isinstance(partial, dict) else "measure"
        return {**outcome, "state": "incomplete", "step": step, "message": run_error}
    return {**outcome, "state": "uploaded", "step": "upload", "message": ""}


def flashmark_lines(boards: list[str], hostvars: Any) -> list[str]:
    """One line a board: its label, what became of its run, and why."""
    lines = []
    for board in boards:
        outcome = _outcome_of(board, hostvars)
        state = outcome.get("state", "no outcome (unreachable, or its play stopped)")
        line = f"{board}: {state}"
        if outcome.get("message"):
            line += f": {outcome['message']}"
        if outcome.get("uploaded"):
            line += f" (on the service as result {outcome['uploaded']})"
        lines.append(line)
    return lines


def flashmark_to_run_again(boards: list[str], hostvars: Any) -> list[str]:
    """The boards whose whole result did not reach the campaign."""
    return [board for board in boards if _outcome_of(board, hostvars).get("state") != "uploaded"]


def _outcome_of(board: str, hostvars: Any) -> dict[str, Any]:
    try:
        outcome = hostvars[board].get("flashmark_outcome")
    except (KeyError, AttributeError):
        return {}
    return dict(outcome) if isinstance(outcome, dict) else {}


def _document(run: dict[str, Any]) -> dict[str, Any] | None:
    try:
        document = json.loads((run or {}).get("stdout", ""))
    except ValueError:
        return None
    return document if isinstance(document, dict) else None


def _error_of(result: dict[str, Any] | None) -> str:
    """flashmark's one-line error (its last line on stderr), or Ansible's message."""
    if not isinstance(result, dict):
        return ""
    lines = [line for line in str(result.get("stderr", "")).splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("flashmark: ")]
    if errors:
        return errors[-1].removeprefix("flashmark: ").removeprefix("error: ")
    if result.get("rc") not in (0, None) and lines:
        return lines[-1]
    return str(result.get("msg", "")) if result.get("failed") or result.get("rc") else ""


def _seconds(run: dict[str, Any]) -> float | None:
    delta = (run or {}).get("delta")  # "0:00:41.123456" (the command module's)
    if not isinstance(delta, str):
        return None
    hours, minutes, seconds = delta.split(":")
    return round(int(hours) * 3600 + int(minutes) * 60 + float(seconds), 1)


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {
            "flashmark_plan": flashmark_plan,
            "flashmark_needs_install": flashmark_needs_install,
            "flashmark_reference": flashmark_reference,
            "flashmark_refusal": flashmark_refusal,
            "flashmark_outcome": flashmark_outcome,
            "flashmark_lines": flashmark_lines,
            "flashmark_to_run_again": flashmark_to_run_again,
        }
