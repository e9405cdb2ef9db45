"""The optional backends replay can use: the configured embedder and the Kuzu graph.

Both are looked up lazily and both may be missing, switched off or broken;
replay then uses its local floors (TF-IDF, ``applies_to:`` lines) and the plan
says so.
"""
from __future__ import annotations

from typing import Any

from mnemara.core.config import Config
from mnemara.store.instance import Instance
from mnemara.replay.augment import EntityLookup


def default_embedder(config: Config) -> Any:
    """The configured embedder (:func:`mnemara.memory.search.embedders.make_embedder`), or ``None`` when
    RAG is off or there is none; replay then clusters on TF-IDF."""
    if not config.rag_enabled:
        return None
    from mnemara.memory.search.embedders import make_embedder

    embedder, _problem = make_embedder(config)
    return embedder


def default_entity_lookup(instance: Instance, config: Config) -> EntityLookup | None:
    """A read-only ``applies_to`` lookup on the instance graph, or ``None``."""
    if not config.graph_enabled:
        return None
    try:
        from mnemara.replay.graphlink import graph_entity_lookup
    except ImportError:
        return None
    return graph_entity_lookup(instance)


def default_backends(instance: Instance) -> tuple[Any, EntityLookup | None]:
    config = Config.load(instance.config_path)
    return default_embedder(config), default_entity_lookup(instance, config)
