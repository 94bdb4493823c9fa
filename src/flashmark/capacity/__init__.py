"""`flashmark capacity`: the real capacity of a device that may claim more than it has.

search.py is the method, signature.py the blocks it writes, backup.py the undo log that
makes it non-destructive, rawdev.py the O_DIRECT I/O, result.py the saved document, probe.py
the whole run (claim, backup, search, restore).
"""
