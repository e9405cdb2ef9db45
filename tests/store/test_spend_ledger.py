"""spend.sqlite: every call priced from the API's usage, summed by turn, session and day, across reopenings."""
from __future__ import annotations

import os

import pytest

from mnemara.core.fsutil import LinkRefused
from mnemara.core.pricing import cost_usd
from mnemara.store.spend_ledger import CallSpend, SpendLedger, today

SONNET = "claude-sonnet-4-6"


def test_calls_are_priced_with_cache_reads_and_writes_and_summed_by_turn_session_and_day(tmp_path):
    usage = {"input_tokens": 1000, "output_tokens": 100, "cache_read_input_tokens": 10_000,
             "cache_creation_input_tokens": 2000,
             "cache_creation": {"ephemeral_5m_input_tokens": 1500, "ephemeral_1h_input_tokens": 500}}
    spend = CallSpend.from_usage(SONNET, usage)
    assert (spend.cache_write_5m_tokens, spend.cache_write_1h_tokens, spend.cache_read_tokens) == (1500, 500, 10_000)
    # 1000*3 + 100*15 + 1500*3.75 + 500*6 + 10000*0.3, per million
    assert spend.cost_usd == pytest.approx((3000 + 1500 + 5625 + 3000 + 3000) / 1e6)
    assert spend.cost_usd == cost_usd(SONNET, usage)
    ledger = SpendLedger(tmp_path)
    ledger.add(spend, session="s1", turn="t1")
    ledger.add(spend, session="s1", turn="t2")
    ledger.add(CallSpend.from_usage(SONNET, {"input_tokens": 10}), session="s2", turn="t3")
    assert ledger.totals(turn="t1").calls == 1
    assert ledger.spent(session="s1") == pytest.approx(2 * spend.cost_usd)
    day = ledger.totals(day=today())
    assert day.calls == 3 and day.cache_read_tokens == 20_000 and day.cache_write_tokens == 4000
    assert ledger.totals(day="1999-01-01").calls == 0


def test_the_ledger_survives_a_restart_and_keeps_calls_of_unknown_models_unpriced(tmp_path):
    ledger = SpendLedger(tmp_path)
    ledger.add(CallSpend.from_usage(SONNET, {"input_tokens": 1_000_000}), session="a", turn="x")
    ledger.add(CallSpend.from_usage("some-future-model", {"input_tokens": 5}), session="a", turn="x")
    ledger.close()
    again = SpendLedger(tmp_path).totals(session="a")
    assert (again.calls, again.cost_usd, again.unpriced_calls, again.input_tokens) == (2, 3.0, 1, 1_000_005)
    assert os.stat(tmp_path / "spend.sqlite").st_mode & 0o077 == 0


def test_a_planted_link_in_place_of_the_ledger_is_refused_and_not_written_through(tmp_path, mnemara_home):
    root = mnemara_home / "inst"
    root.mkdir(parents=True)
    target = tmp_path / "victim"
    target.write_text("keep me")
    (root / "spend.sqlite").symlink_to(target)
    with pytest.raises(LinkRefused):
        SpendLedger(root).add(CallSpend(SONNET), session="s", turn="t")
    assert target.read_text() == "keep me"


# -- pruning: old per-call rows are folded, no sum changes -------------------------------------------------

import sqlite3  # noqa: E402
from datetime import date, timedelta  # noqa: E402

from mnemara.store import spend_ledger  # noqa: E402

#: The first ledgers' table (no folded_* columns). Written out: the module's schema has them now.
OLD_SCHEMA = """
CREATE TABLE calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, day TEXT NOT NULL, session TEXT NOT NULL,
    turn TEXT NOT NULL, seq INTEGER, model TEXT NOT NULL, status INTEGER, input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL, cache_read_tokens INTEGER NOT NULL, cache_write_5m_tokens INTEGER NOT NULL,
    cache_write_1h_tokens INTEGER NOT NULL, cost_usd REAL, prices_as_of TEXT NOT NULL
);
CREATE INDEX calls_day ON calls(day);
CREATE INDEX calls_session ON calls(session);
CREATE INDEX calls_turn ON calls(turn);
"""


def _days_ago(n: int) -> str:
    return (date.today() - timedelta(days=n)).isoformat()


def _backdate(path, day: str, ids: range) -> None:
    db = sqlite3.connect(path)
    db.execute("UPDATE calls SET day = ?, at = ? || 'T12:00:00+00:00' WHERE id >= ? AND id < ?",
               (day, day, ids.start, ids.stop))
    db.commit()
    db.close()


def _every_sum(ledger: SpendLedger, sessions, days) -> dict:
    return {"all": ledger.totals(), **{("session", s): ledger.totals(session=s) for s in sessions},
            **{("day", d): ledger.totals(day=d) for d in days},
            **{("session+day", s, d): ledger.totals(session=s, day=d) for s in sessions for d in days}}


def _fill(tmp_path) -> tuple[list[str], list[str]]:
    """Calls on five days (two older than kept), in three sessions, of a priced and an unpriced model."""
    ledger = SpendLedger(tmp_path)
    plan = [("s-old", 90), ("s-long", 45), ("s-long", 3), ("s-new", 1), ("s-new", 0)]
    for n, (session, ago) in enumerate(plan):
        for k in range(7):
            usage = {"input_tokens": 1234 * (k + 1) + n, "output_tokens": 77 * k, "cache_read_input_tokens": 999 * k,
                     "cache_creation": {"ephemeral_5m_input_tokens": 31 * k, "ephemeral_1h_input_tokens": 7 * n}}
            model = "some-future-model" if k == 3 else SONNET
            ledger.add(CallSpend.from_usage(model, usage), session=session, turn=f"{session}-t{k % 3}", seq=k)
    ledger.close()
    for n, (session, ago) in enumerate(plan):  # backdated once written: an open would fold them
        if ago:
            _backdate(tmp_path / "spend.sqlite", _days_ago(ago), range(7 * n + 1, 7 * n + 8))
    return sorted({s for s, _ in plan}), sorted({_days_ago(a) for _, a in plan})


def _rows(path) -> int:
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
    finally:
        db.close()


def test_old_calls_are_folded_and_no_sum_a_cap_or_cost_reads_changes(tmp_path):
    sessions, days = _fill(tmp_path)
    path = tmp_path / "spend.sqlite"
    assert _rows(path) == 35
    # what the sums were with every call's row, read by a ledger that does not fold (a long time to keep)
    original = spend_ledger.KEEP_CALL_DAYS
    spend_ledger.KEEP_CALL_DAYS = 10_000
    try:
        unfolded = SpendLedger(tmp_path)
        before = _every_sum(unfolded, sessions, days)
        turns_before = {t: unfolded.totals(turn=t) for t in ("s-new-t0", "s-new-t1", "s-long-t2")}
        unfolded.close()
    finally:
        spend_ledger.KEEP_CALL_DAYS = original
    folded = SpendLedger(tmp_path)
    after = _every_sum(folded, sessions, days)
    assert after == before
    assert before["all"].calls == 35 and before["all"].unpriced_calls == 5
    # the 90- and 45-day-old days: one row per day, session and model; the recent days untouched
    assert _rows(path) == 4 + 21
    assert folded.totals(turn=spend_ledger.FOLDED_TURN).calls == 14
    assert {t: folded.totals(turn=t) for t in turns_before} != turns_before  # s-long-t2 lost its old day
    assert folded.totals(turn="s-new-t0") == turns_before["s-new-t0"]
    folded.close()
    again = SpendLedger(tmp_path)  # folding again changes nothing
    assert _every_sum(again, sessions, days) == before and _rows(path) == 25


def test_a_ledger_of_an_earlier_mnemara_is_read_and_folded_the_same(tmp_path):
    path = tmp_path / "spend.sqlite"
    db = sqlite3.connect(path)
    db.executescript(OLD_SCHEMA)
    for n, day in enumerate((_days_ago(60), _days_ago(60), _days_ago(2))):
        db.execute("INSERT INTO calls (at, day, session, turn, seq, model, status, input_tokens, output_tokens,"
                   " cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, cost_usd, prices_as_of)"
                   " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                   (day + "T00:00:00+00:00", day, "s", f"t{n}", n, SONNET, 200, 1000 + n, 10, 0, 0, 0,
                    None if n == 1 else 0.003 + n / 1000, "2026-01-01"))
    db.commit()
    db.close()
    ledger = SpendLedger(tmp_path)
    total = ledger.totals()
    assert (total.calls, total.unpriced_calls, total.input_tokens) == (3, 1, 3003)
    assert total.cost_usd == pytest.approx(0.003 + 0.005)
    assert ledger.totals(day=_days_ago(60)).calls == 2 and _rows(path) == 2


def test_folding_keeps_the_total_of_a_session_that_spans_the_cut(tmp_path):
    """A `mnemara serve` running for weeks: its session cap reads the same sum after the fold."""
    sessions, days = _fill(tmp_path)
    spend_ledger.KEEP_CALL_DAYS, original = 10_000, spend_ledger.KEEP_CALL_DAYS
    try:
        before = SpendLedger(tmp_path).spent(session="s-long")
    finally:
        spend_ledger.KEEP_CALL_DAYS = original
    assert SpendLedger(tmp_path).spent(session="s-long") == before > 0


def test_a_new_ledger_is_made_in_one_transaction_with_every_column(tmp_path, monkeypatch):
    """A call's row is on its turn's path (the turn's end waits for it to be counted): a new ledger is made
    with one commit, not one per statement, no column is added afterwards, and rows are not synced one by one."""
    statements: list[str] = []
    connect = sqlite3.connect

    def traced(*args, **kwargs):
        db = connect(*args, **kwargs)
        db.set_trace_callback(statements.append)
        return db

    monkeypatch.setattr(sqlite3, "connect", traced)
    ledger = SpendLedger(tmp_path)
    ledger.add(CallSpend(SONNET, input_tokens=10), session="s", turn="t")
    ledger.close()
    writes = [s.split()[0].upper().rstrip(";") for s in statements if not s.upper().startswith(("SELECT", "PRAGMA"))]
    assert writes == ["BEGIN", "CREATE", "CREATE", "CREATE", "CREATE", "COMMIT", "INSERT"], statements
    assert "PRAGMA synchronous=NORMAL" in statements, "no disk sync per call's row (WAL, as turns.sqlite)"
    monkeypatch.undo()
    db = sqlite3.connect(tmp_path / "spend.sqlite")
    columns = {row[1] for row in db.execute("PRAGMA table_info(calls)")}
    db.close()
    assert {"folded_calls", "folded_unpriced"} <= columns
