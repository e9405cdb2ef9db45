"""The ``mnemara`` command line: a click group whose commands live in topic modules.

Each module of this package (``instances``, ``run``, ``replay`` ...; discovered,
no list to edit) adds its commands to :data:`main` on import. Commands stay thin: parse, call the domain, print. Heavy
libraries (the SDK, Textual, LanceDB, Kuzu) are imported inside the commands
that need them so ``mnemara --help``, ``list``, ``show`` and ``note`` start fast.
"""
from __future__ import annotations

import importlib
import pkgutil
import sys
from typing import Any

import click

from mnemara.core.redact import redact_urls_in
from mnemara.core.errors import MnemaraError


class _Group(click.Group):
    """Refuses arguments that are not UTF-8 text, and turns :class:`MnemaraError` (and an ``OSError``)
    into one ``error:`` line and its exit code."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        for arg in args:  # Python hands undecodable argv bytes over as lone surrogates
            try:
                arg.encode("utf-8")
            except UnicodeEncodeError:
                from mnemara.core.display import terminal_safe

                raw = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
                shown = terminal_safe(raw).replace("\n", "\\n")
                click.echo(f"error: the argument '{shown}' is not UTF-8 text "
                           "(the bytes shown as \\xNN); Mnemara takes names, text and paths as UTF-8", err=True)
                sys.exit(2)
        return super().parse_args(ctx, args)

    def main(self, args: Any = None, *rest: Any, **kwargs: Any) -> Any:
        try:
            return super().main(args, *rest, **kwargs)
        except SystemExit as exc:
            if args is None:  # the `mnemara` process itself (a test passes its arguments): maybe no teardown
                from mnemara.cli.fast_exit import end_process

                end_process(exc.code)
            raise

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MnemaraError as exc:
            from mnemara.cli.common import current_instance
            from mnemara.core.debuglog import log_event

            inst = current_instance.get()
            if inst is not None:
                log_event(inst.debug_log_path, "cli_error", "error", command=ctx.invoked_subcommand, message=exc.message)
            click.echo(f"error: {redact_urls_in(exc.message)}", err=True)  # never a URL's credentials on screen
            sys.exit(exc.exit_code)
        except OSError as exc:  # a file where a folder belongs, no permission, a full disk ...: one line, no traceback
            where = f": {exc.filename}" if exc.filename else ""
            click.echo(f"error: {redact_urls_in(f'{exc.strerror or exc}{where}')}", err=True)
            sys.exit(2)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mnemara")
def main() -> None:
    """Mnemara: a terminal runtime for Claude agents where you own the context.

    Every instance lives in $MNEMARA_HOME/<name>/ (default ~/.mnemara). Start with
    `mnemara init --instance NAME`, point it at a role doc with `mnemara role`,
    then `mnemara run --instance NAME`.
    """


for _info in pkgutil.iter_modules(__path__):
    if _info.name != "common":
        importlib.import_module(f"{__name__}.{_info.name}")
