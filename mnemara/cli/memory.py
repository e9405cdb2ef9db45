"""``mnemara reindex``: rebuild the RAG index of an instance from its files."""
from __future__ import annotations


from mnemara.cli import main
from mnemara.cli.common import instance_option, open_instance, say


@main.command()
@instance_option
def reindex(instance_name: str) -> None:
    """Rebuild the RAG index (index/) from memory/ and wiki/ from scratch.

    Entries added with rag_index are carried over when the old index is
    readable. Without a reachable embedder the keyword index is rebuilt and
    vectors are filled in by later queries.
    """
    from mnemara.core.config import Config
    from mnemara.core.debuglog import log_event
    from mnemara.core.errors import MnemaraError
    from mnemara.memory.search.rag import RagIndex, RagUnavailable

    inst = open_instance(instance_name)
    cfg = Config.load(inst.config_path)
    rag = RagIndex.for_instance(inst, cfg)
    try:
        stats = rag.rebuild()
    except RagUnavailable as exc:
        raise MnemaraError(f"RAG backend unavailable: {exc}") from None
    log_event(inst.debug_log_path, "rag_reindex", **{k: v for k, v in stats.items() if k != "embedding"})
    say(f"reindexed {instance_name}: {stats['chunks']} chunks from {stats['sources']} files"
               f" (+{stats.get('manual_carried', 0)} carried over from rag_index)")
    embedding = stats.get("embedding") or {}
    if embedding.get("skipped"):
        say(f"vectors: not computed ({embedding['skipped']}); queries stay keyword-only until it answers")
    elif embedding:
        model = getattr(rag.embedder, "model", "") or "no embedder"  # the one used, not the Ollama setting
        say(f"vectors: {embedding.get('embedded', 0)} embedded with {model}")
    if stats.get("warning"):
        say(f"warning: {stats['warning']}", err=True)
