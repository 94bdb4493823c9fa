"""`python -m flashmark`: the same entry as the console script (signal handlers first)."""

import os

try:
    from flashmark.entry import main
except KeyboardInterrupt:  # Ctrl-C while flashmark.entry itself loads: its own answer (130)
    os.write(2, b"flashmark: stopped by SIGINT\n")
    os._exit(130)

main()
