"""For you, discord-free: a member's 👍 / 👎 ratings and the one "already shown" memory
(`store`), the model that ranks new papers from their library and ratings (`model`), and the
feeds they tune (`feeds`). Other features and the app use the names below, never the modules."""

from bot.foryou.store import DOWN, UP, Rating, Ratings, ratings_of

__all__ = ["DOWN", "UP", "Rating", "Ratings", "ratings_of"]
