"""Everything that reads or holds the host: OS roots, mounts, disk counters, device stacks and
identities, device safety, private folders and locks, the watchdog, signals and leftovers
(docs/design.md, "The floors").
"""
