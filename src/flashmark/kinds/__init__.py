"""The kinds of result flashmark keeps and shows: each kind's contract (kinds.contract) is built
in its own package and listed once in kinds.registry."""
