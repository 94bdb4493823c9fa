"""Results as people read them, in one format-neutral shape, and the writers that put any
kind's view on the terminal, in Markdown and in CSV.

model.py is the view (a kind's one rendering function returns it), terminal.py, markdown.py
and csv_table.py the writers, writers.py what a kind hands its `ResultKind` from its view
function.
"""
