"""`flashmark surface`: the whole surface of a device (or a folder's free space), read, or
written and verified, with MB/s per slice, the cache cliff and a map of what is wrong.

    job = prepare_surface(SurfaceRequest("/dev/sdb"), history=history)  # refusals here
    outcome = run_surface(job, history=history, progress=...)            # SurfaceOutcome

run.py: the library calls; resume.py: the history it is kept in; scan.py: the passes;
medium.py, worker.py: the device or files; pattern.py, cache.py, result.py, view.py, html.py,
kind.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flashmark.lazy import face_names, lazy_face

if TYPE_CHECKING:
    from flashmark.surface.kind import SURFACE as SURFACE
    from flashmark.surface.result import SURFACE_SCHEMA as SURFACE_SCHEMA
    from flashmark.surface.result import SurfaceResult as SurfaceResult
    from flashmark.surface.run import DEFAULT_BLOCK as DEFAULT_BLOCK
    from flashmark.surface.run import DEVICE as DEVICE
    from flashmark.surface.run import FOLDER as FOLDER
    from flashmark.surface.run import MAX_SLICES as MAX_SLICES
    from flashmark.surface.run import MIN_SLICES as MIN_SLICES
    from flashmark.surface.run import ScanStopped as ScanStopped
    from flashmark.surface.run import SurfaceJob as SurfaceJob
    from flashmark.surface.run import SurfaceOutcome as SurfaceOutcome
    from flashmark.surface.run import SurfacePlan as SurfacePlan
    from flashmark.surface.run import SurfaceRequest as SurfaceRequest
    from flashmark.surface.run import plan_surface as plan_surface
    from flashmark.surface.run import prepare_surface as prepare_surface
    from flashmark.surface.run import run_surface as run_surface
    from flashmark.surface.run import scan_surface as scan_surface

_NAMES = {
    ".kind": ("SURFACE",),
    ".result": ("SURFACE_SCHEMA", "SurfaceResult"),
    ".run": (
        "DEFAULT_BLOCK",
        "DEVICE",
        "FOLDER",
        "MAX_SLICES",
        "MIN_SLICES",
        "ScanStopped",
        "SurfaceJob",
        "SurfaceOutcome",
        "SurfacePlan",
        "SurfaceRequest",
        "plan_surface",
        "prepare_surface",
        "run_surface",
        "scan_surface",
    ),
}
__getattr__ = lazy_face(__name__, _NAMES)
__all__ = face_names(_NAMES)
