"""A query's way to a plan: syntax, filters, phrases, word order, feedback."""
