"""Loopback stand-ins of the OpenReview API v2 and the arXiv export API (aiohttp.web on 127.0.0.1).

They serve the documented formats (OpenReview notes JSON with `{value: ...}` content fields and
`count`; arXiv Atom with OpenSearch totals, laid out as the recorded responses in
../shared/sources/arxiv/ are), page with offset/limit and start/max_results, refuse what the real
services refuse (a bad arXiv query is a 400 error feed; an OpenReview limit above 1000 is a 400),
and can be told to answer 429 with Retry-After, a burst of 503s, or a huge body made as it is
sent. `EndlessOpenReview` pages forever; `FakePaperLists` serves Paper Copilot lists.
"""

from .arxiv import FakeArxiv, arxiv_entry
from .base import Fault, LoopbackServer
from .openreview import EndlessOpenReview, FakeOpenReview, note
from .paperlists import FakePaperLists

__all__ = [
    "EndlessOpenReview",
    "FakeArxiv",
    "FakeOpenReview",
    "FakePaperLists",
    "Fault",
    "LoopbackServer",
    "arxiv_entry",
    "note",
]
