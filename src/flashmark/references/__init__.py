"""The reference data set: figures published in the seed documents, not measured by flashmark.

Each record (ReferenceDevice) keeps its source, host board, tool and method, and every figure
as printed (text and unit) next to its value in flashmark's units. Comparisons must label these
as published figures. See docs/references.md for the sources, units and caveats.
"""
