"""A reader's library, discord-free: its tables, and its exports."""
