"""The kinds of result flashmark keeps and shows, listed once (kinds.registry): each kind's
contract (flashmark.result_kind.ResultKind) is built in its own package. A document's kind by
its schema, the entry it is kept as, a result file read for `import` (files.py), and a
document as text.
"""
