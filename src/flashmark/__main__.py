"""`python -m flashmark`: the same entry as the console script (signal handlers first)."""

from flashmark.entry import main

main()
