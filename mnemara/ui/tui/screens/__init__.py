"""Modal screens of the chat panel: permission prompt, role doc editor, context viewer, text prompt."""
