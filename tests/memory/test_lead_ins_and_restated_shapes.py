"""Round 10 of issue 40: restated copies a new writer's notes flagged as conflicts.

Each rule is shown with the pair it was made for (the dev_blind_r14 and dev_blind_r15 parts of
bench/data/truth_subjects.json, or a pair of the same shape) and with the pair it must still refuse,
so a rule that claims too much fails here, not on the user's memory.
"""
from __future__ import annotations

import pytest

from mnemara.memory.search.claim import claim_of
from mnemara.memory.search.claim_words import without_lead_in
from mnemara.memory.search.similarity import CONFLICT, POSSIBLE_COPY, relate


def kind(a: str, b: str) -> str:
    return relate(a, b).kind


# -- an opening that only announces the note ------------------------------------------------------------------
@pytest.mark.parametrize(("text", "rest"), [
    ("FYI, the billing repo is on GitHub.", "the billing repo is on GitHub."),
    ("Noting for later: this month the club reads Piranesi.", "this month the club reads Piranesi."),
    ("As mentioned, the user prefers aisle seats.", "the user prefers aisle seats."),
    ("Noting again that the harbour master is Pim.", "the harbour master is Pim."),
    ("Just a quick reminder: rent is due Friday.", "rent is due Friday."),
    ("Zur Info: das Büro ist zu.", "das Büro ist zu."),
    ("Pour rappel : le loyer est dû.", "le loyer est dû."),
])
def test_an_opening_that_only_announces_the_note_is_set_aside(text: str, rest: str) -> None:
    assert without_lead_in(text) == rest


@pytest.mark.parametrize("text", [
    "Update: the standup is at 10.",  # says the fact changed
    "Notes are kept in Obsidian.",  # the word opens the claim itself
    "Remembering names is hard for the user.",
    "Noted.",  # nothing after it
    "Reminder emails go out at 9.",  # no separator: "reminder" is what the note is about
])
def test_an_opening_that_is_part_of_the_claim_stays(text: str) -> None:
    assert without_lead_in(text) == text


def test_a_lead_in_and_another_wording_of_a_place_is_a_possible_copy() -> None:
    older = "The deploy key for the billing repo is stored in Vault under secret/billing/deploy."
    assert kind(older, "FYI, the billing repo's deploy key lives in Vault at secret/billing/deploy.") == POSSIBLE_COPY
    assert kind(older, "FYI, the billing repo's deploy key lives in Vault at secret/billing/deploy-v2.") == CONFLICT


def test_a_lead_in_never_hides_a_change() -> None:
    assert kind("The standup is at 9:30.", "FYI, the standup moved to 10:15.") == CONFLICT
    assert kind("The standup is at 9:30.", "Update: the standup is at 10.") == CONFLICT
    older = "The user's book club is reading 'The Overstory' this month."
    assert kind(older, "Noting for later: this month the book club is reading 'The Overstory'.") != CONFLICT
    assert kind(older, "Noting for later: this month the book club is reading 'Piranesi'.") == CONFLICT


def test_the_same_text_after_a_lead_in_is_proposed_never_merged_on_its_own() -> None:
    relation = relate("Code freeze starts on Thursday.", "Heads up: code freeze starts on Thursday.")
    assert relation.kind == POSSIBLE_COPY


# -- sentences turned round --------------------------------------------------------------------------------------
def test_a_passive_with_a_time_after_its_agent_is_the_active_turned_round() -> None:
    older = "The landlord services the boiler every autumn."
    assert kind(older, "The boiler is serviced by the landlord every autumn.") == POSSIBLE_COPY
    assert kind(older, "The boiler is serviced by the plumber every autumn.") != POSSIBLE_COPY
    assert kind(older, "The boiler is serviced by the landlord every spring.") != POSSIBLE_COPY


def test_each_and_every_are_one_word_when_a_sentence_is_turned_round() -> None:
    older = "The user renews the car registration every October."
    assert kind(older, "The car registration is renewed by the user each October.") == POSSIBLE_COPY
    assert kind(older, "The car registration is renewed by the user each March.") == CONFLICT


def test_names_that_make_up_a_team_are_the_team() -> None:
    older = "The DBA team is Hana, Rui and Sam."
    assert kind(older, "Sam, Hana and Rui make up the DBA team.") == POSSIBLE_COPY
    assert kind(older, "Sam and Hana make up the DBA team.") == CONFLICT  # one member fewer
    assert kind(older, "Sam, Hana and Rui make up the QA team.") != POSSIBLE_COPY


# -- what adds no detail -------------------------------------------------------------------------------------------
def test_the_user_as_owner_adds_no_detail() -> None:
    older = "User's yoga class is Monday at 7pm at Lotus Studio."
    assert kind(older, "Note to self: yoga class at Lotus Studio, Monday 7pm.") != CONFLICT
    assert kind(older, "Note to self: yoga class at Lotus Studio, Tuesday 7pm.") == CONFLICT


def test_a_thing_called_by_its_name_is_the_named_thing() -> None:
    older = "Our Terraform state is stored in an S3 bucket called acme-tfstate."
    assert kind(older, "Just a reminder: our Terraform state is stored in the acme-tfstate S3 bucket.") != CONFLICT
    assert kind(older, "Just a reminder: our Terraform state is stored in the acme-tfstate-v2 S3 bucket.") == CONFLICT


def test_any_after_a_preposition_speaks_of_every_one() -> None:
    older = "User prefers aisle seats on flights longer than three hours."
    assert kind(older, "As mentioned, the user prefers an aisle seat on any flight longer than three hours.") \
        == POSSIBLE_COPY
    assert kind(older, "As mentioned, the user prefers an aisle seat on some flights longer than three hours.") \
        == CONFLICT
    assert "any" in claim_of("Any admin can deploy.").function  # not after a preposition: it still claims
    assert "any" in claim_of("There are not any seats left.").function


def test_under_a_path_is_a_place_and_under_an_amount_a_limit() -> None:
    assert "under" not in claim_of("The key is kept under secret/billing/deploy.").function
    assert "under" in claim_of("Page loads are under 200 ms.").function
    assert "under" in claim_of("Builds finish under five minutes.").function


# -- a change that starts later ------------------------------------------------------------------------------------
def test_a_change_from_next_month_is_a_change() -> None:
    older = "The user's streaming subscription is Netflix Standard."
    assert kind(older, "From next month they're on Netflix Basic with ads to save money.") == CONFLICT
    assert kind(older, "Ab nächstem Monat ist es Netflix Basic.") == CONFLICT
    # "from" of a place says no change: a sibling stays apart
    assert kind("Backups are copied from the ops box to Netflix's bucket.",
                "The user's streaming subscription is Netflix Standard.") != CONFLICT
