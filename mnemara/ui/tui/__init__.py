"""The Textual chat panel that ``mnemara run`` opens.

Textual is imported only when the panel starts, so importing this package is cheap.
"""
from __future__ import annotations

from typing import Any

from mnemara.store.instance import Instance


def run_panel(instance: Instance, **kwargs: Any) -> None:
    """Open the panel on ``instance`` and block until the user quits."""
    from mnemara.ui.tui.app import MnemaraApp

    MnemaraApp(instance, **kwargs).run()
