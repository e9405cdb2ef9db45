"""Helpers for the memory-layer tests: an instance, its config and a tool context."""
from __future__ import annotations

from typing import Any

from mnemara.core.live_config import LiveConfig
from mnemara.core.config import Config
from mnemara.store.instance import Instance
from mnemara.tools import ToolContext, all_specs


def make_instance(name: str = "mem", **config: Any) -> tuple[Instance, Config]:
    inst = Instance.create(name)
    cfg = Config.load(inst.config_path)
    for key, value in config.items():
        setattr(cfg, key, value)
    cfg.save(inst.config_path)
    return inst, cfg


def context(inst: Instance, cfg: Config) -> ToolContext:
    return ToolContext(instance=inst, live=LiveConfig(inst.config_path, current=cfg), store=None)  # type: ignore[arg-type]  # memory tools never use it


_SPECS: dict[str, Any] = {}


def call(ctx: ToolContext, name: str, **args: Any) -> dict[str, Any]:
    if not _SPECS:  # the handlers are plain functions: one list of specs serves every call
        _SPECS.update((s.name, s) for s in all_specs())
    return _SPECS[name].handler(ctx, args)  # type: ignore[no-any-return]


def corrupt_folder(folder) -> None:
    """Overwrite every file under ``folder`` with junk (the way a bad disk or a stray tool would)."""
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        if path.name.startswith("."):
            continue
        size = max(path.stat().st_size, 64)
        path.write_bytes((b"junk-not-a-database-" * (size // 20 + 1))[:size])
