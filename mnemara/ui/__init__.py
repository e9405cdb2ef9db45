"""User interfaces over AgentSession: the Textual panel (tui/) and the prompt-toolkit REPL."""
