"""Presenting results: terminal tables, the exporter registry (Markdown, CSV, JSON, HTML) and
the one module describing devices and environments for every view."""
