"""Workloads fio cannot express: a desktop's package install, its removal and reinstall, and a
cold boot-like read. Each reports wall time, its own operations and bytes, and what the device
saw meanwhile (flashmark.monitor); docs/workloads.md has the model and its sources.

    [result] = run_workloads(("pkg-install",), Path("/media/card"), scale=0.1,
                             roots=SystemRoots.from_environment())

The runner is session.py; what reads a result imports only the data types (result.py).
"""
