"""Does the device keep what it acknowledged? The power-cut test (docs/powercut.md).

`run_powercut` writes verifiable records, keeps each acknowledged flush point outside the
device, cuts the power while writes are in flight, reads every record back and classifies it;
`run_host_down_cycle` and `verify_powercut` do it over a reboot, with the flush points kept
on another machine through ssh (`keep_entries` there). The result is a `PowercutResult`.
"""
