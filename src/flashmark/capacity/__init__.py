"""`flashmark capacity`: the real capacity of a device that may claim more than it has.

    plan = plan_capacity(CapacityRequest("/dev/sdb"))   # refusals, before a confirmation
    result = run_capacity(plan, progress=...)           # CapacityResult

search.py: the method; signature.py: the blocks; backup.py: the undo log; probe.py: the whole
run (its device I/O: flashmark.system.block_device); result.py, view.py, kind.py.
"""
