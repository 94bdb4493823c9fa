"""A campaign of a results service as one file: its page (the service's /campaigns/NAME,
self-contained) or its CSV, as `flashmark report --campaign NAME --server URL` writes it."""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass

from flashmark.errors import UsageError
from flashmark.server.campaign import campaign_csv, campaign_from_json
from flashmark.server.campaign_names import campaign_problem
from flashmark.server.campaign_page import campaign_page
from flashmark.server.upload import campaign_answer, service_origin


@dataclass(frozen=True)
class CampaignFile:
    """The file's text and how many boards it shows."""

    text: str
    boards: int


def campaign_file(server: str, name: str, *, as_csv: bool) -> CampaignFile:
    """The campaign `name` as `server` has it now, as HTML or CSV; UsageError for a bad name
    or a campaign the service does not have."""
    problem = campaign_problem(name)
    if problem is not None:
        raise UsageError(f"--campaign: {problem}")
    answer = campaign_answer(server, name)
    if answer is None:
        raise UsageError(f"{server} has no campaign {name}")
    found = campaign_from_json(answer)
    root = service_origin(server) + urllib.parse.urlsplit(server).path.rstrip("/")
    text = campaign_csv(found, root) if as_csv else campaign_page(found, standalone=True, root=root)
    return CampaignFile(text, len(found.boards))
