"""Everything that judges a run: class grades, claimed vs measured findings, and the warnings about
conditions that distort a measurement. Pure functions of measured results and probe reports.

    classes.py     results -> A1/A2 and speed-class grades (value, threshold, margin, source)
    claims.py      probe claims + grades -> "claims A2; measured ...: meets A1, not A2"
    conditions.py  probe -> warnings (governor, throttling, busy device, worn or slow links)
"""
