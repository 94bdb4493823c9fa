"""Presenting results: terminal tables now; Markdown, CSV and HTML exporters join here."""
