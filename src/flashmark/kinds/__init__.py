"""The kinds of result flashmark keeps and shows, listed once (kinds.registry): each kind's
contract (flashmark.result_kind.ResultKind) is built in its own package."""
