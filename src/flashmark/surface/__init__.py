"""`flashmark surface`: the whole surface of a device (or a folder's free space), read, or
written and verified, with MB/s per slice, the cache cliff and a map of what is wrong.

    job = prepare_surface(SurfaceRequest("/dev/sdb"), history=history)  # refusals here
    outcome = run_surface(job, history=history, progress=...)            # SurfaceOutcome

run.py: the library calls; resume.py: the history it is kept in; scan.py: the passes;
medium.py, worker.py: the device or files; pattern.py, cache.py, result.py, view.py, html.py,
kind.py.
"""
