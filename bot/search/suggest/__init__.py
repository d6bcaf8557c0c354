"""Finding papers without ranking: titles, inner words, spelling, authors, lookups."""
