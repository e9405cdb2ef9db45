"""What replay embeds notes with (optional: without it, or when it fails, replay uses TF-IDF)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, Union


class EmbedsTexts(Protocol):
    """An embedder object (:class:`mnemara.memory.search.embedders.Embedder` is one)."""

    def embed(self, texts: list[str]) -> Sequence[Sequence[float]]: ...


#: A callable ``texts -> vectors`` or an object with ``.embed``.
TextEmbedder = Union[Callable[[list[str]], Sequence[Sequence[float]]], EmbedsTexts]
