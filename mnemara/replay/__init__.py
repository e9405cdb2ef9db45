"""``mnemara replay``: the consolidation ("sleep") pass over recent memory notes.

Seven phases: load atoms, cluster them, augment patterns from the graph, draft
wiki proposals, archive near-duplicates, draft role amendments from recurring
self-observations, write the sleep digest. :func:`run_replay` is the entry
point for the CLI and for Python callers; without ``apply=True`` it writes
nothing at all and returns the plan of what it would do.
"""
from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import Iterator

from mnemara.core.errors import InstanceNotFound
from mnemara.store.instance import Instance
from mnemara.replay.augment import EntityLookup
from mnemara.replay.embedding import TextEmbedder
from mnemara.replay.plan import Action, Pattern, Progress, ReplayPlan, ReplayResult, apply_plan, build_plan

__all__ = ["run_replay", "ReplayPlan", "ReplayResult", "Pattern", "Action"]


def run_replay(
    instance: Instance | str | Path,
    *,
    days: int | None = None,
    threshold: int | None = None,
    apply: bool = False,
    embed: TextEmbedder | None = None,
    entity_lookup: EntityLookup | None = None,
    today: date | None = None,
    now: datetime | None = None,
    progress: Progress | None = None,
) -> ReplayPlan:
    """Plan a replay and, with ``apply=True``, carry it out.

    ``instance`` is an :class:`Instance`, an instance name, or a folder path.
    ``days``/``threshold`` override the replay policy, which overrides config.
    ``embed`` is optional: a callable ``list[str] -> list[vector]`` or an object
    with ``.embed``; without it (or when it fails) a local TF-IDF is used.
    ``entity_lookup`` maps atoms to graph entities (see :mod:`.augment`).
    Returns the plan; after an apply, ``plan.result`` says what was done.
    """
    inst = _resolve(instance)

    def planned() -> ReplayPlan:
        return build_plan(inst, days=days, threshold=threshold, embed=embed, entity_lookup=entity_lookup, today=today,
                          now=now, progress=progress)

    if not apply:
        return planned()
    with _exclusive(inst.root):
        plan = planned()
        apply_plan(plan, inst)
    return plan


@contextmanager
def _exclusive(folder: Path) -> Iterator[None]:
    """One applying replay per instance at a time: a lock on the folder itself (creates no file)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _resolve(instance: Instance | str | Path) -> Instance:
    if isinstance(instance, Instance):
        return instance
    if isinstance(instance, Path):
        if not (instance / "config.json").is_file():
            raise InstanceNotFound(f"{instance} is not a Mnemara instance (no config.json)")
        return Instance(name=instance.name, root=instance)
    return Instance.open(instance)
