"""Scripts behind docs/decisions.md: each prints the figures an entry there cites."""
