"""The history: every saved result in one SQLite file (store.py), the entries it holds
(entries.py), the cards they measured (cards.py), and the recovery file a result goes to when
the history cannot take it (recovery.py).
"""
