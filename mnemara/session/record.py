"""Writing what a turn produced to turns.sqlite, and to the spool when the store cannot take it.

The user's message is stored before anything is sent; the answer (or, for a
turn that failed, what tools did and the text shown so far, marked
interrupted) is stored when the turn ends. A row the store refuses waits in
``spool.jsonl`` (:mod:`mnemara.store.spool`) and is stored at the start of the next
turn. Every way a turn ends yields :class:`~mnemara.core.events.TurnDone` last; the
session does its after-turn work (trim, hooks, the next CLI) just before it.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mnemara.core import events as ev
from mnemara.core.debuglog import log_event
from mnemara.core.errors import MnemaraError, StoreUnavailable
from mnemara.store.instance import Instance
from mnemara.store.spool import Spool
from mnemara.store.rows import text_block
from mnemara.store.turns import TurnStore
from mnemara.session.state import RunningTurn


def storable_text(text: str) -> tuple[str, int]:
    """``text`` as UTF-8 can hold it, and how many characters had to be replaced.

    A pipe or terminal read with ``surrogateescape`` hands undecodable bytes on as
    lone surrogates (so does a lone half of a UTF-16 pair in an embedder's string);
    SQLite and the spool refuse them, which would lose the whole message. Each one
    becomes U+FFFD; a surrogate pair becomes the character it stands for.
    """
    try:
        text.encode("utf-8")
        return text, 0
    except UnicodeEncodeError:
        pass
    fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return fixed, fixed.count("\ufffd") - text.count("\ufffd")


class TurnRecorder:
    """Stores the rows of one session's turns and says, once, what it could not store."""

    def __init__(self, instance: Instance, store: TurnStore) -> None:
        self.instance = instance
        self.store = store
        self.spool = Spool(instance.root)
        self._damaged_seen: set[int] = set()  # damaged rows already reported this session
        self._unreadable_told = False  # spool lines that are not rows: said once a session

    @property
    def _log(self) -> Any:
        return self.instance.debug_log_path

    def user_message(self, text: str) -> tuple[int | None, list[ev.Event]]:
        """Store what the spool kept, then the user's message: its row id and the notices to show.

        When the store cannot take it, the message is spooled: no id, and the events end the turn.
        """
        notices, store_ok = self.replay_spool()
        try:
            if not store_ok:  # the spool could not go in: neither can this message, do not wait twice
                raise StoreUnavailable(self.store.damaged or "turns.sqlite is still unavailable")
            return self.store.append("user", text), notices
        except StoreUnavailable as exc:
            return None, [*notices, *self.spooled("user", [text_block(text)], {}, exc)]

    def replay_spool(self) -> tuple[list[ev.Event], bool]:
        """Store what the spool kept; returns notices and whether the store took it (or had nothing)."""
        done = self.spool.replay(self.store)
        if done.error is not None:
            log_event(self._log, "spool_replay_failed", level="warning", error=done.error)
            return [], False
        notices: list[ev.Event] = []
        if done.file_error is not None:  # the store itself may work: this message is stored as usual
            log_event(self._log, "spool_unreadable", level="warning", error=done.file_error)
            notices.append(ev.Notice(f"{done.file_error}; the rows in it wait there until it can be read"))
        if done.rows or done.unreadable:
            log_event(self._log, "spool_replayed", rows=done.rows, unreadable=done.unreadable)
        if done.rewrite_error is not None:
            log_event(self._log, "spool_rewrite_failed", level="warning", error=done.rewrite_error)
        if done.rows:
            notices.append(ev.Notice(f"{done.rows} row(s) kept in {self.spool.path.name} while turns.sqlite was "
                                     "unavailable are now stored", "info"))
        if done.unreadable and not self._unreadable_told:
            self._unreadable_told = True
            notices.append(ev.Notice(f"{done.unreadable} line(s) of {self.spool.path} are not rows Mnemara can read "
                                     "(cut short or not UTF-8); they are kept in the file, not stored"))
        return notices, True

    def spooled(self, role: str, blocks: list[dict[str, Any]], meta: dict[str, Any], exc: StoreUnavailable,
                **done: Any) -> list[ev.Event]:
        """Keep a row the store refused in the spool; one error line, then :class:`TurnDone`.

        When the spool cannot be written either (a full disk, a read-only folder) the line says the
        row is NOT saved, with the kind ``unsaved_message`` (your message: a panel puts it back in
        its input) or ``unsaved_answer``; the turn still ends normally, the session stays usable.
        """
        what = "your message" if role == "user" else "the answer"
        try:
            self.spool.add(role, blocks, meta)
        except OSError as failed:
            message = (f"{what} is NOT saved: turns.sqlite cannot take it ({exc.message}) and {self.spool.path} "
                       f"cannot be written ({failed})")
            log_event(self._log, "row_not_saved", level="error", role=role, reason=exc.message, spool_error=str(failed))
            return [ev.ErrorEvent(message, "unsaved_message" if role == "user" else "unsaved_answer"),
                    ev.TurnDone(error=message, **done)]
        message = (f"turns.sqlite cannot take {what} now ({exc.message}); it is kept in {self.spool.path} and will be "
                   "stored when the store works again")
        log_event(self._log, "row_spooled", level="error", role=role, reason=exc.message)
        return [ev.ErrorEvent(message, "store"), ev.TurnDone(error=message, **done)]

    def error(self, message: str, kind: ev.ErrorKind, user_id: int, **fields: Any) -> ev.ErrorEvent:
        """Log why the turn failed and mark its user row with it (best effort)."""
        log_event(self._log, "turn_error", level="error", kind=kind, message=message, user_row_id=user_id, **fields)
        try:
            self.store.update_meta(user_id, error=message, error_kind=kind)
        except MnemaraError:
            pass
        return ev.ErrorEvent(message, kind)

    def refusal(self, message: str, kind: ev.ErrorKind, user_id: int) -> list[ev.Event]:
        """The turn cannot run and nothing was sent: the error, then :class:`TurnDone`. The message stays
        stored, marked ``no_reply``: later turns leave it out of the window (it was never answered, so
        it is not sent again behind the user's back); sending it again asks it again."""
        error = self.error(message, kind, user_id)
        try:
            self.store.update_meta(user_id, no_reply=True)
        except MnemaraError:
            pass
        return [error, ev.TurnDone(user_row_id=user_id, error=message)]

    def damaged_notices(self, row_ids: list[int]) -> list[ev.Event]:
        """One notice naming damaged rows left out of the context, each row reported once a session."""
        fresh = [i for i in row_ids if i not in self._damaged_seen]
        self._damaged_seen.update(fresh)
        if not fresh:
            return []
        log_event(self._log, "damaged_rows_skipped", level="warning", row_ids=fresh)
        ids = ", ".join(map(str, fresh))
        return [ev.Notice(f"turns.sqlite row(s) {ids} are damaged and were left out of the context "
                          "(`mnemara show` marks them)")]

    def failure(self, turn: RunningTurn) -> Iterator[ev.Event]:
        """Say what failed; keep what tools did and the text shown so far, once, as a partial
        assistant row marked interrupted."""
        failure, collector = turn.failure, turn.collector
        assert failure is not None
        yield self.error(failure.message, failure.kind, turn.user_id, stderr=turn.stderr[-5:])
        partial_id = None
        if collector.blocks or collector.unconfirmed_text:
            meta = {"usage": collector.usage, "cost_usd": collector.cost_usd, "model": turn.cfg.model,
                    "interrupted": True, "user_row_id": turn.user_id, "error": failure.message,
                    "error_kind": failure.kind}
            try:
                partial_id = self.store.append("assistant", collector.final_blocks(True), meta)
            except StoreUnavailable as exc:
                events = self.spooled("assistant", collector.final_blocks(True), meta, exc)
                if isinstance(events[0], ev.ErrorEvent) and events[0].kind == "unsaved_answer":
                    yield events[0]
        yield ev.TurnDone(usage=collector.usage, cost_usd=collector.cost_usd, user_row_id=turn.user_id,
                          assistant_row_id=partial_id, error=failure.message, interrupted=partial_id is not None)

    def answer(self, turn: RunningTurn) -> Iterator[ev.Event]:
        """Store the answer (with the sentinel's notice when it halted the turn)."""
        collector, watch, user_id = turn.collector, turn.watch, turn.user_id
        meta: dict[str, Any] = {"usage": collector.usage, "cost_usd": collector.cost_usd, "model": turn.cfg.model,
                                "interrupted": turn.interrupted, "user_row_id": user_id}
        if watch is not None and watch.halt is not None:
            notice = watch.halt.notice(user_id)
            collector.blocks.append({"type": "text", "text": notice})
            meta["halted"] = "sentinel"
            log_event(self._log, "sentinel_halted_turn", level="warning", user_row_id=user_id,
                      trigger=watch.halt.trigger, call=watch.halt.call, count=watch.halt.count)
            yield ev.Halt(notice)
        elif turn.capped:
            meta["halted"] = "budget"
            log_event(self._log, "spend_cap_halted_turn", level="warning", user_row_id=user_id, line=turn.capped)
            yield ev.Halt(turn.capped, source="budget")
        if collector.result is not None:
            meta.update(duration_ms=collector.result.duration_ms, num_api_calls=collector.result.num_turns)
        if not turn.interrupted:
            meta.update(turn.answer_meta)
        blocks = collector.final_blocks(turn.interrupted)
        try:
            assistant_id = self.store.append("assistant", blocks, meta)
        except StoreUnavailable as exc:  # the answer is kept in the spool like a message would be
            yield from self.spooled("assistant", blocks, meta, exc, usage=collector.usage, cost_usd=collector.cost_usd)
            return
        if turn.interrupted:
            log_event(self._log, "turn_interrupted", user_row_id=user_id, assistant_row_id=assistant_id)
        yield ev.TurnDone(usage=collector.usage, cost_usd=collector.cost_usd, interrupted=turn.interrupted,
                          assistant_row_id=assistant_id, user_row_id=user_id)
