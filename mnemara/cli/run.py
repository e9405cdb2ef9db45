"""``mnemara run`` (chat panel, or the REPL with --no-tui) and ``mnemara demo``."""
from __future__ import annotations

import gc
import io
import os
import sys

import click

from mnemara.cli import main
from mnemara.cli.common import instance_option, open_instance


def collector_on() -> None:
    """Start-up is over: the garbage collector runs again, with every object start-up made frozen
    (``gc.freeze``). Those objects (modules, classes, the SDK's and pydantic's) live as long as the
    process; left in the young generations, they were all scanned by the first collections, about a
    tenth of a second of CPU before the second turn could start (measured on the piped first turn)."""
    gc.freeze()
    gc.enable()


def _want_tui(no_tui: bool) -> bool:
    if no_tui or os.environ.get("MNEMARA_NO_TUI", "").strip() not in ("", "0"):
        return False
    return sys.stdin.isatty() and sys.stdout.isatty()


def _open_panel(instance, session, tour=None) -> bool:
    """Run the Textual panel; False when it is not available (then the REPL runs)."""
    try:
        from mnemara.ui.tui.app import MnemaraApp
    except ImportError:
        return False
    session.warn_to_stderr = False  # stderr would tear the panel; it shows Notice events instead
    MnemaraApp(instance, session=session, tour=tour).run()
    return True


def _check_dirs(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """``--dir`` folders, resolved; a folder that cannot be a file_tool_roots entry is refused in one line."""
    from mnemara.guard.file_roots import check_root, real_homes

    try:
        return tuple(check_root(folder, *real_homes()) for folder in value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _chat(instance, no_tui: bool, banner: str, auto: io.StringIO | None = None, tour=None,
          dirs: tuple[str, ...] = (), early=None) -> int:
    from mnemara.session.agent import AgentSession
    from mnemara.ui.repl.app import run_repl

    try:
        session = AgentSession(instance)
    except BaseException:
        if early is not None:
            early.release()
        raise
    session.launcher.early = early  # its first launch adopts the CLI started before these imports
    piped = auto is None and not _want_tui(no_tui) and not sys.stdin.isatty()
    if early is not None and piped:
        early.awaits_message = True  # the first line may reach the CLI before the SDK is imported
        early.on_settled = collector_on  # that import runs in the first turn: the collector stays off until then
    from mnemara.memory.recall_worker import attach

    recall_worker = attach(session)  # auto-recall's LanceDB and embedder live in a child process
    if (auto is not None or not _want_tui(no_tui)) and not (early is not None and piped):
        from mnemara.claude import import_sdk

        import_sdk()  # the REPL's first turn needs it: imported while the collector is off
    if early is None or early.on_settled is None:
        collector_on()  # start-up done (`run` turned it off); the panel imports the SDK after it has drawn
    if dirs:  # mnemara run --dir: file tools may use these folders in this session (config.json untouched)
        session.override_config(file_tool_roots=[*session.config.file_tool_roots, *dirs])
    for problem in session.gate.new_problems():  # bad regexes / policies: say so before anything runs
        print(f"warning: {problem}", file=sys.stderr)
    try:
        if auto is not None:
            return run_repl(session, stdin=auto, banner=banner)
        if _want_tui(no_tui) and _open_panel(instance, session, tour):
            return 0
        return run_repl(session, banner=banner)
    finally:
        session.close()
        recall_worker.close()
        if early is not None:
            early.release()  # never adopted (no turn, or it did not fit): ended here


@main.command()
@instance_option
@click.option("--no-tui", is_flag=True, help="Use the bare REPL instead of the chat panel (also MNEMARA_NO_TUI=1).")
@click.option("--dir", "dirs", multiple=True, metavar="FOLDER", callback=_check_dirs,
              help="A folder besides $HOME that file tools may use, this session only (repeatable; "
                   "/add-dir saves one).")
def run(instance_name: str, no_tui: bool, dirs: tuple[str, ...]) -> None:
    """Chat with an instance: the chat panel, or the REPL (--no-tui, or stdin not a terminal).

    The REPL reads one message per line when stdin is not a terminal, prints the
    assistant's text to stdout and exits at end of input, so it can be scripted.
    """
    from mnemara.claude.early import start_early
    from mnemara.store.instance import run_lock

    gc.disable()  # no collections during the start-up imports (a tenth of their CPU); on again in _chat
    try:
        inst = open_instance(instance_name)
        with run_lock(inst):
            early = start_early(inst)  # the CLI boots while the SDK, the session and the UI are imported
            code = _chat(inst, no_tui, f"mnemara: {instance_name} (/help for commands, /quit to leave)", dirs=dirs,
                         early=early)
    finally:
        gc.unfreeze()  # a process that invokes `run` in-process (a test) collects start-up's objects again
        gc.enable()
    from mnemara.cli.fast_exit import leave_after_command

    leave_after_command()  # the session, its CLIs and the recall worker are closed: no interpreter teardown
    sys.exit(code)


@main.command()
@click.option("--no-tui", is_flag=True, help="Use the bare REPL instead of the chat panel.")
@click.option("--auto", is_flag=True, help="Play the tour in the REPL by itself (its messages are shown) and exit.")
@click.option("--serve", is_flag=True, help="Only serve scripted replies on 127.0.0.1 and print the env to export.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="Port for --serve (default: a free one).")
def demo(no_tui: bool, auto: bool, serve: bool, port: int) -> None:
    """A two-minute guided tour with no API key: a throwaway instance and a scripted model on 127.0.0.1.

    Everything but the model is real (the Claude Agent SDK, its CLI, the turn
    store, the tools). Nothing under $MNEMARA_HOME is touched. With --serve, only
    the scripted API runs, for trying your own role doc with `mnemara run`.
    """
    if serve:
        from mnemara.testing.serve import serve as serve_forever

        sys.exit(serve_forever(port))
    if port:
        raise click.UsageError("--port goes with --serve")
    from mnemara.demo.tour import Demo
    from mnemara.demo.script import NEXT_STEPS, Tour

    with Demo() as d:
        if auto:
            banner = "mnemara demo --auto: the tour plays itself in the REPL (a scripted model answers from 127.0.0.1)"
            code = _chat(d.instance, True, banner, auto=d.auto_input())
        else:
            banner = ("mnemara demo: a guided tour; a scripted model answers from 127.0.0.1. "
                      "Send the message in the input (Ctrl+S in the panel), /quit to leave")
            code = _chat(d.instance, no_tui, banner, tour=Tour())
    print(NEXT_STEPS.replace("/quit leaves the demo; its throwaway instance is deleted.",
                             "The demo's throwaway instance is deleted."))
    sys.exit(code)
