"""`/library show|remove|read|import|export|clear`: a reader's saved papers (saved with the Save
button, or imported from a reference manager's file).

Every answer is ephemeral: a library is personal. The work is in `bot.library.actions` (shared with
the console) and `bot.library.store`; this cog only translates commands.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.app import installs, render, respond
from bot.app.checks import stored_autocomplete, stored_text
from bot.app.exts.library import views as saving
from bot.library import actions as library
from bot.library import importing
from bot.library.export import FORMATS

if TYPE_CHECKING:
    from bot.app.client import PaperBot
    from bot.storage.store import Storage

REF_MAX = 100


async def _saved(
    interaction: discord.Interaction[PaperBot], storage: Storage
) -> list[tuple[str, str]]:
    """The reader's saved papers as (title, id); the id alone once a paper left the corpus."""
    engine = interaction.client.engine
    saved = await library.library_of(storage).all(interaction.user.id)
    papers = [(item.paper_id, library.find(engine, item.paper_id)) for item in saved]
    return [(render.title_text(paper) if paper else pid, pid) for pid, paper in papers]


saved_autocomplete = stored_autocomplete(_saved)


class LibraryCog(commands.Cog, name="Library"):
    library = installs.anywhere(app_commands.Group(name="library", description="Your saved papers"))

    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot

    @library.command(name="show", description="Your saved papers, newest first, read or unread")
    @app_commands.describe(page="Which page (5 papers each)")
    async def show(
        self, interaction: discord.Interaction[PaperBot], page: app_commands.Range[int, 1, 9999] = 1
    ) -> None:
        await saving.show_library(interaction, page, edit=False)

    @library.command(name="remove", description="Remove a paper from your library")
    @app_commands.describe(paper="Start typing a title from your library")
    @app_commands.autocomplete(paper=saved_autocomplete)
    async def remove(
        self, interaction: discord.Interaction[PaperBot], paper: app_commands.Range[str, 1, REF_MAX]
    ) -> None:
        stored_text(paper, "the paper")
        store = library.library_of(self.bot.storage)
        paper_id = await library.resolve_saved(store, self.bot.engine, interaction.user.id, paper)
        await store.remove(interaction.user.id, paper_id)
        title = saving.title_of(self.bot.engine, paper_id)
        await respond.confirm(interaction, f"Removed **{title}** from your library.")

    @library.command(name="read", description="Mark a saved paper as read (or unread again)")
    @app_commands.describe(paper="Start typing a title from your library", read="False: unread")
    @app_commands.autocomplete(paper=saved_autocomplete)
    async def read(
        self,
        interaction: discord.Interaction[PaperBot],
        paper: app_commands.Range[str, 1, REF_MAX],
        read: bool = True,
    ) -> None:
        stored_text(paper, "the paper")
        store = library.library_of(self.bot.storage)
        paper_id = await library.resolve_saved(store, self.bot.engine, interaction.user.id, paper)
        await store.mark_read(interaction.user.id, paper_id, library.now(), read)
        state = "read ✅" if read else "unread 🔵"
        title = saving.title_of(self.bot.engine, paper_id)
        await respond.confirm(interaction, f"Marked **{title}** as {state}.")

    @library.command(name="import", description="Add papers from a Zotero/BibTeX/RIS/CSL-JSON file")
    @app_commands.describe(file="A .bib, .ris or CSL-JSON .json export of your reference manager")
    async def import_(
        self, interaction: discord.Interaction[PaperBot], file: discord.Attachment
    ) -> None:
        importing.refuse_size(file.filename, file.size)  # by its announced size, not downloaded
        store = library.library_of(self.bot.storage)
        data = await respond.soon(interaction, file.read())
        prepared = await respond.compute(
            interaction, importing.prepare, self.bot.engine, file.filename, data
        )
        report = await importing.save_matched(
            store,
            self.bot.engine,
            interaction.user.id,
            file.filename,
            prepared,
            max_saved=self.bot.settings.library.max_saved,
            guild_id=interaction.guild_id,
        )
        await respond.confirm(interaction, report.text())

    @library.command(
        name="export", description="Your library as a file for LaTeX, Zotero or a sheet"
    )
    @app_commands.describe(
        format="bibtex (LaTeX), ris or csljson (Zotero, EndNote), markdown (a checklist), csv"
    )
    @app_commands.choices(format=[app_commands.Choice(name=f, value=f) for f in FORMATS])
    async def export(
        self, interaction: discord.Interaction[PaperBot], format: app_commands.Choice[str]
    ) -> None:
        # One upload may be as large as the interaction says (`attachment_size_limit`), within
        # EXPORT_MAX_BYTES; a larger export comes as several files on one message. Building it
        # is CPU work (a 1,000-paper BibTeX file), done off the loop, deferring if it is slow.
        store = library.library_of(self.bot.storage)
        saved = await respond.soon(
            interaction, library.saved_for_export(store, interaction.user.id, format.value)
        )
        # `filesize_limit` (the payload's `attachment_size_limit`) came with discord.py 2.6.
        told: int = getattr(interaction, "filesize_limit", library.EXPORT_MAX_BYTES)
        limit = min(told, library.EXPORT_MAX_BYTES)
        made = await respond.compute(
            interaction, library.make_export, self.bot.engine, saved, format.value, limit
        )
        count, parts = made.count, len(made.files)
        text = f"Your library as {format.name}: {count} paper{'s' if count != 1 else ''}"
        text += f", in {parts} files (too large for one upload)." if parts > 1 else "."
        if made.missing:
            text += f" {made.missing} saved paper(s) are no longer in the corpus and were left out."
        files = [discord.File(io.BytesIO(data), filename=name) for name, data in made.files]
        if interaction.response.is_done():  # deferred ("thinking…") while the files were built
            await interaction.edit_original_response(content=text, attachments=files)
        else:
            await interaction.response.send_message(content=text, files=files, ephemeral=True)

    @library.command(
        name="clear", description="Delete everything the bot stores about you (asks first)"
    )
    async def clear(self, interaction: discord.Interaction[PaperBot]) -> None:
        count = await library.library_of(self.bot.storage).count(interaction.user.id)
        view = discord.ui.View(timeout=None)
        view.add_item(saving.ForgetButton(interaction.user.id))
        text = (
            f"This deletes your library ({count} paper{'s' if count != 1 else ''}), your "
            "personal follows and your reactions counted by `/top`. It cannot be undone. "
            "Dismiss this message to keep everything."
        )
        await respond.send(interaction, embed=render.error_embed(text), view=view, ephemeral=True)


async def setup(bot: PaperBot) -> None:
    await bot.add_cog(LibraryCog(bot))
