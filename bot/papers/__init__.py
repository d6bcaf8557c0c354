"""Paper records and everything about them that needs no index: the record and link
types, corpus readers, record formats, LaTeX, links, and the files the bot writes atomically.
No numpy here: sources tidy a record without importing the search engine."""
