"""Issue 40, round 3: a restatement is a possible copy by where the notes differ, not by a list of
lead-in phrases; days and months are values; a number naming a thing before the linking verb is
another subject; a change dated by an event, said in Italian, Portuguese or Dutch, or said by
retiring the old value is one subject changed. Cases written here, none taken from bench/data/."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from mnemara.memory.dedupe import assess
from mnemara.memory.lint import supersession_candidates
from mnemara.memory.notes import append_note
from mnemara.memory.search.claim_words import calendar_values
from mnemara.memory.search.restate import restates
from mnemara.memory.search.similarity import CONFLICT, DISTINCT, POSSIBLE_COPY, may_conflict, relate

DAY = datetime(2026, 6, 1, 9, tzinfo=timezone.utc)


@pytest.mark.parametrize(("older", "newer"), [
    ("Worth knowing: the build cache is pruned by the janitor job.", "The build cache is pruned by the janitor job."),
    ("Also keep in mind that the printer queue is shared with finance.", "The printer queue is shared with finance."),
    ("Ter info: de printer staat op de gang.", "De printer staat op de gang."),  # Dutch, a lead-in no list holds
    ("Nota bene, la sala riunioni è al piano terra.", "La sala riunioni è al piano terra."),
    ("The release notes live in the docs repo.", "The release notes live in the docs repo, as agreed with the team."),
    ("The wiki export lands in the archive folder.", "The wiki export lands in the archive folder (the team drive)."),
    ("Sam and Noor own the search index.", "As discussed: Noor and Sam own the search index."),  # reordered + lead-in
    # round 4: set-off detail that names things is still detail (the merge keeps it)
    ("The archive job runs at night.", "The archive job runs at night (in the EU region)."),
    ("The wiki export lands in the archive folder.", "The wiki export lands in the archive folder, in eu-west-2."),
    ("The kiosk in the lobby is offline.", "The kiosk in the lobby is offline, says the IT desk."),
    ("The kiosk in the lobby is offline.", "The kiosk in the lobby is offline again, says reception."),  # stop words woven in
])
def test_a_restatement_that_only_adds_words_claiming_nothing_is_a_possible_copy(older: str, newer: str) -> None:
    assert restates(older, newer) and restates(newer, older), (older, newer)
    assert relate(older, newer).kind == POSSIBLE_COPY, relate(older, newer)


@pytest.mark.parametrize(("older", "newer", "why"), [
    ("Refunds need approval.", "Refunds need approval from the CFO.", "woven into the sentence"),
    ("Refunds need approval.", "Refunds need approval once, from the CFO.", "a number woven in"),
    ("Refunds need approval.", "Refunds need approval, within 3 days.", "a number"),
    ("Refunds need approval.", "Refunds need approval, except small ones.", "a limiter"),
    ("Refunds need approval.", "Refunds need approval, not a ticket.", "a negation"),
    ("The archive job runs at night.", "The archive job runs at night, on Sundays.", "a day"),
    ("Priya reviews the contracts.", "Priya and Omar review the contracts.", "a member added to a list"),
    ("The archive job runs at night.", "The archive job runs at night, weekly.", "a cadence"),
    ("Remember the ticket.", "The ticket.", "the shorter note is no statement"),
])
def test_added_words_that_claim_something_are_no_restatement(older: str, newer: str, why: str) -> None:
    assert not restates(older, newer), (why, restates(older, newer))
    assert relate(older, newer).kind != POSSIBLE_COPY, (why, relate(older, newer))


def test_days_and_months_are_values_in_every_language() -> None:
    assert calendar_values("Le comité se réunit le mardi.") == calendar_values("The board meets on Tuesday.") == {"d2"}
    assert calendar_values("A entrega é na quinta-feira.") == {"d4"} and not calendar_values("a quinta parte")
    assert not calendar_values("Deploys may wait.") and calendar_values("Deploys wait until May.") == {"m05"}
    for older, newer in (("La riunione del team è il martedì.", "La riunione del team è il giovedì."),
                         ("Het overleg is op maandag.", "Het overleg is op vrijdag.")):
        rel = relate(older, newer)
        assert rel.kind == CONFLICT and any("days or months differ" in r for r in rel.reasons), rel


def test_a_number_naming_a_thing_before_the_linking_verb_is_another_subject() -> None:
    rel = relate("Shard 4 of the queue is drained at 02:00.", "Shard 7 of the queue is drained at 05:00.")
    assert rel.kind == DISTINCT and "different subjects" in rel.reasons[0], rel
    assert relate("The queue is drained by shard 4.", "The queue is drained by shard 7.").kind == CONFLICT


@pytest.mark.parametrize(("older", "newer"), [
    ("The ticket queue for outages is #sev.", "Since the merger, outage tickets go to #major-incidents."),
    ("Our CI server is Jenkins.", "Builds run on Buildkite; Jenkins was decommissioned."),
    ("Il database di test usa MySQL 5.", "Il database di test è stato migrato a Postgres 16."),
    ("O relatório mensal sai no dia 5.", "O relatório mensal foi adiado para o dia 12."),
    ("De nieuwsbrief gaat naar 400 klanten.", "De nieuwsbrief is verplaatst naar een nieuwe lijst van 650 klanten."),
])
def test_a_change_said_by_an_event_another_language_or_a_retirement_is_one_subject(older: str, newer: str) -> None:
    assert may_conflict(older, newer) and relate(older, newer).kind == CONFLICT, relate(older, newer)


def test_two_notes_that_both_retire_something_keep_their_subjects() -> None:
    rel = relate("Staging snapshots are deleted after 7 days.", "Billing exports are deleted after 90 days.")
    assert rel.kind != CONFLICT, rel


def test_the_write_check_proposes_a_merge_and_lint_no_supersession_for_a_restatement(tmp_path) -> None:
    memory = tmp_path / "memory"
    append_note(memory, "The on-call handbook lives in the ops space.", "fact", when=DAY)
    append_note(memory, "Shard 4 of the queue is drained at 02:00.", "fact", when=DAY + timedelta(minutes=1))
    check = assess(memory, "Good to know: the on-call handbook lives in the ops space.")
    assert check.duplicate is None and not check.conflicts
    assert [c.atom.text for c in check.copies] == ["The on-call handbook lives in the ops space."]
    append_note(memory, "Good to know: the on-call handbook lives in the ops space.", "fact", when=DAY + timedelta(days=1))
    append_note(memory, "Shard 7 of the queue is drained at 05:00.", "fact", when=DAY + timedelta(days=1, minutes=1))
    kinds = {(c.older_text, c.kind) for c in supersession_candidates(memory)}
    assert kinds == {("The on-call handbook lives in the ops space.", "merge")}, kinds
