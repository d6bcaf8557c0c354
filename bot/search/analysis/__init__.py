"""Text to index terms: the one analyzer for papers and queries, and the snippets it highlights."""
