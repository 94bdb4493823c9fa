"""What the device itself saw, interval by interval: an iostat built on /proc/diskstats.
series.py: the data (pure; what reports import); sampler.py: DiskMonitor, the sampling thread;
command.py: a command run under watch; watch.py: `flashmark monitor`; document.py, view.py,
kind.py. A report that reads a recording imports series.py only, never threads or
subprocesses.
"""
