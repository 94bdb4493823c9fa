"""Presenting results across kinds: the exporter registry (Markdown, CSV, JSON, HTML), the HTML
report's page, comparisons of runs and published references, and the tables of the history and
of the reference data set.
"""
