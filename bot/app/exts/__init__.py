"""One package per feature (python-discord's `exts/`): its cog, views and embeds. Each
package's `setup` is what `load_extension` runs; `ITEMS` are its persistent components."""
