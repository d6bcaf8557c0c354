"""For you, discord-free: a member's 👍 / 👎 ratings and the one "already shown" memory
(`store`), the model that ranks new papers from their library and ratings (`model`), and a
member's ranked page (`ranking`). Other features and the app use the names below, never the
modules."""

from bot.foryou.model import MIN_SIGNALS, Profile, build_profile, query_strength, score
from bot.foryou.ranking import (
    PAGE,
    WINDOW_DAYS,
    ForYouPage,
    Ranked,
    Signals,
    load_page,
    new_positions,
    page_of,
    positions_of,
    recommend,
    signals_of,
)
from bot.foryou.store import DOWN, UP, Rating, Ratings, claim_shown, ratings_of

__all__ = [
    "DOWN",
    "MIN_SIGNALS",
    "PAGE",
    "UP",
    "WINDOW_DAYS",
    "ForYouPage",
    "Profile",
    "Ranked",
    "Rating",
    "Ratings",
    "Signals",
    "build_profile",
    "claim_shown",
    "load_page",
    "new_positions",
    "page_of",
    "positions_of",
    "query_strength",
    "ratings_of",
    "recommend",
    "score",
    "signals_of",
]
