"""``mnemara serve``: a headless panel (no terminal) that delivers an instance's peer inbox as it arrives."""
