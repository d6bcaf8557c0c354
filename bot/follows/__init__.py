"""Follows, discord-free: a member's or a channel's saved queries, what each has been told, and
which new papers match them."""
