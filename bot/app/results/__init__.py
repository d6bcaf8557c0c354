"""Pages of results and paper views, shared by /search, /similar, /paper, /random and /new:
what a page shows (`pages.PageState`, which travels in the buttons' custom_ids) and the
buttons and menu under it (`views`)."""
