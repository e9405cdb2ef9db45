"""Widgets of the chat panel, one per module."""
