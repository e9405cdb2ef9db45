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
