"""Issue 39: /import replaced the instance's role doc (coder.md -> sentinel.md) reporting only "config
restored". The instance's role doc stays; the export's is saved beside the instance and the answer says how
to take it. An instance with no role doc takes the export's (nothing is replaced)."""
from __future__ import annotations

import shlex
from pathlib import Path

from mnemara.commands import dispatch
from mnemara.core.config import Config, update_config


def _export_with_role(session_factory, tmp_path: Path, text: str) -> Path:
    source = session_factory("src")
    role = tmp_path / "sentinel.md"
    role.write_text(text, encoding="utf-8")
    update_config(source.instance.config_path, role_doc_path=str(role))
    source.reload_config()
    source.store.append("user", "a row from the other instance")
    out = tmp_path / "session.md"
    assert dispatch(source, f"/export {out}").ok
    return out


def test_import_keeps_the_role_doc_and_says_how_to_take_the_exports(session_factory, tmp_path):
    export = _export_with_role(session_factory, tmp_path, "# Sentinel\nWatch everything.")
    mine = tmp_path / "coder.md"
    mine.write_text("# Coder\nWrite code.", encoding="utf-8")
    ctx = session_factory("dst")
    update_config(ctx.instance.config_path, role_doc_path=str(mine))
    ctx.reload_config()
    result = dispatch(ctx, f"/import {export}")
    assert result.ok, result.text
    original = tmp_path / "sentinel.md"  # still holds the export's text: named, not copied
    assert f"role doc kept: {mine} (the export's, which differs, is {original}; /role {original} " \
           "switches to it)" in result.text
    original.unlink()  # gone: the export's text is saved into the instance, and named
    again = dispatch(ctx, f"/import --accept-permissions {export}")
    saved = ctx.instance.root / "role.md"
    assert saved.read_text(encoding="utf-8") == "# Sentinel\nWatch everything."
    assert f"the export's, which differs, is {saved}; /role {shlex.quote(str(saved))} switches" in again.text
    assert "config restored from the export" in result.text
    assert Config.load(ctx.instance.config_path).role_doc_path == str(mine) == ctx.config.role_doc_path
    assert mine.read_text(encoding="utf-8") == "# Coder\nWrite code."
    assert "a row from the other instance" in [t.text for t in ctx.store.history()]
    switched = dispatch(ctx, f"/role {saved}")  # the line the answer gives
    assert switched.ok and Config.load(ctx.instance.config_path).role_doc_path == str(saved)


def test_import_takes_the_exports_role_doc_when_the_instance_has_none_or_the_same(session_factory, tmp_path):
    export = _export_with_role(session_factory, tmp_path, "# Sentinel")
    empty = session_factory("none")
    result = dispatch(empty, f"/import {export}")
    assert result.ok and "role doc kept" not in result.text
    assert Config.load(empty.instance.config_path).role_doc_path == str(tmp_path / "sentinel.md")
    same = session_factory("same")
    copy = tmp_path / "copy.md"
    copy.write_text("# Sentinel", encoding="utf-8")
    update_config(same.instance.config_path, role_doc_path=str(copy))
    same.reload_config()
    result = dispatch(same, f"/import {export}")
    assert result.ok and "role doc kept" not in result.text and not (same.instance.root / "role.md").exists()


def test_import_keep_permissions_says_the_config_was_kept(session_factory, tmp_path):
    export = _export_with_role(session_factory, tmp_path, "# Sentinel")
    ctx = session_factory("keep")
    result = dispatch(ctx, f"/import --keep-permissions {export}")
    assert result.ok and "this instance's config kept" in result.text and "config restored" not in result.text


def test_the_piped_repl_says_the_role_doc_was_kept(session_factory, tmp_path):
    import io

    from mnemara.ui.repl.app import run_piped

    export = _export_with_role(session_factory, tmp_path, "# Sentinel")
    mine = tmp_path / "coder.md"
    mine.write_text("# Coder", encoding="utf-8")
    ctx = session_factory("repl-import")
    update_config(ctx.instance.config_path, role_doc_path=str(mine))
    ctx.reload_config()
    out, err = io.StringIO(), io.StringIO()
    run_piped(ctx, io.StringIO(f"/import {export}\n"), out, err)
    assert f"role doc kept: {mine} (the export's, which differs, is {tmp_path / 'sentinel.md'}" in out.getvalue()
    assert Config.load(ctx.instance.config_path).role_doc_path == str(mine)
