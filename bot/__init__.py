"""Paper bot: BM25 search over conference papers, served on Discord, a console and a CLI."""
