"""``mnemara context``: a recorded API call, block by block, labelled with where each block came from."""
from __future__ import annotations

import click

from mnemara.cli import main
from mnemara.cli.common import instance_option, open_instance, say_json
from mnemara.core.errors import UsageError
from mnemara.core.display import terminal_safe


@main.command("context")
@instance_option
@click.option("--call", "which", default="last", show_default=True, metavar="last|last-N|N",
              help="Which recorded call: the last one, N calls before it, or a call number.")
@click.option("--json", "as_json", is_flag=True, help="Print the labelled blocks as JSON.")
@click.option("--diff", "diff_with", is_flag=False, flag_value="previous", default=None, metavar="[N]",
              help="Compare with another call (default: the one before).")
@click.option("--full", is_flag=True, help="Print every block's whole text, not a one-line preview.")
def context(instance_name: str, which: str, as_json: bool, diff_with: str | None, full: bool) -> None:
    """Show an API call exactly as the API received it, block by block with its origin and tokens."""
    from mnemara.context.request_view import call_report, diff_report, format_call, format_diff
    from mnemara.store.request_log import RequestLog

    inst = open_instance(instance_name)
    log = RequestLog(inst.root)
    call = log.load(which)
    if diff_with is not None:
        other_seq = log.previous(call.seq) if diff_with == "previous" else None
        if diff_with == "previous" and other_seq is None:
            raise UsageError(f"call {call.seq} is the oldest kept: there is no call before it to compare with")
        other = log.load(other_seq if other_seq is not None else diff_with)
        report = diff_report(other, call)
        if as_json:
            say_json(report, indent=1)
        else:
            click.echo(terminal_safe(format_diff(report)))
        return
    report = call_report(call)
    if as_json:
        say_json(report, indent=1)
    else:
        click.echo(terminal_safe(format_call(report, full)))
