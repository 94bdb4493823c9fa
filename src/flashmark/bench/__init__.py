"""The benchmark run (`flashmark run`) and what judges a device: the pipeline, the fio jobs of
its tests and their output (jobs, results), the grades (grading/), the card passport, the run's
model and document, their renderers (render/), and `flashmark probe` (probing).

    with open_benchmark(BenchmarkRequest("/media/card")) as benchmark:   # planned
        run = benchmark.run(progress)                                     # measured, judged

Names load when first used: `flashmark history` must not load the pipeline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flashmark.lazy import face_names, lazy_face

if TYPE_CHECKING:
    from flashmark.bench.benchmark import Benchmark as Benchmark
    from flashmark.bench.benchmark import BenchmarkRequest as BenchmarkRequest
    from flashmark.bench.benchmark import BenchmarkStopped as BenchmarkStopped
    from flashmark.bench.benchmark import open_benchmark as open_benchmark
    from flashmark.bench.benchmark import plan_benchmark as plan_benchmark
    from flashmark.bench.benchmark import run_benchmark as run_benchmark
    from flashmark.bench.benchmark import with_card_passport as with_card_passport
    from flashmark.bench.document import document_to_run as document_to_run
    from flashmark.bench.grading.classes import GRADE_NAMES as GRADE_NAMES
    from flashmark.bench.grading.classes import unmet_requirements as unmet_requirements
    from flashmark.bench.jobs import PREPARE_JOB_NAME as PREPARE_JOB_NAME
    from flashmark.bench.kind import RUN as RUN
    from flashmark.bench.lengths import MIN_TRANSFERS as MIN_TRANSFERS
    from flashmark.bench.lengths import TARGET_HALF_WIDTH_PCT as TARGET_HALF_WIDTH_PCT
    from flashmark.bench.model import TargetKind as TargetKind
    from flashmark.bench.plan import Plan as Plan
    from flashmark.bench.probe_kind import PROBE as PROBE
    from flashmark.bench.probe_kind import ProbeResult as ProbeResult
    from flashmark.bench.probing import ProbeRequest as ProbeRequest
    from flashmark.bench.probing import run_probe as run_probe
    from flashmark.bench.profiles import PROFILES as PROFILES
    from flashmark.bench.render.profiles import profiles_document as profiles_document
    from flashmark.bench.render.profiles import profiles_table as profiles_table
    from flashmark.bench.run_result import Run as Run

_NAMES = {
    ".benchmark": (
        "Benchmark",
        "BenchmarkRequest",
        "BenchmarkStopped",
        "open_benchmark",
        "plan_benchmark",
        "run_benchmark",
        "with_card_passport",
    ),
    ".document": ("document_to_run",),
    ".grading.classes": ("GRADE_NAMES", "unmet_requirements"),
    ".jobs": ("PREPARE_JOB_NAME",),
    ".kind": ("RUN",),
    ".lengths": ("MIN_TRANSFERS", "TARGET_HALF_WIDTH_PCT"),
    ".model": ("TargetKind",),
    ".run_result": ("Run",),
    ".plan": ("Plan",),
    ".probe_kind": ("PROBE", "ProbeResult"),
    ".probing": ("ProbeRequest", "run_probe"),
    ".profiles": ("PROFILES",),
    ".render.profiles": ("profiles_document", "profiles_table"),
}
__getattr__ = lazy_face(__name__, _NAMES)
__all__ = face_names(_NAMES)
