"""`flashmark clean`: remove what killed flashmark runs left, whose owner is gone (their names
say who made them: flashmark.system.leftovers).

    result = run_clean(CleanRequest("/media/card", dry_run=True))   # CleanResult
    notes = clean_at_start("/media/card")   # what a measuring command says when it starts

run.py does it, result.py is the document (`flashmark.clean/1`), render.py the terminal view,
kind.py its contract (printed only).
"""
