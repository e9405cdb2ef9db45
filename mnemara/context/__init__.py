"""Context discipline: eviction, compression, export/import, skeletons and the file manifest.

Pure domain code over :class:`mnemara.store.turns.TurnStore`; the agent's tools
(``mnemara.tools.context_tools``), the slash commands (``mnemara.commands.context``)
and the TUI's context viewer are thin adapters over these functions.
"""
