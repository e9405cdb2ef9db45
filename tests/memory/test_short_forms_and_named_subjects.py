"""Round 12 of issue 40: short forms, openings without a separator, a note's subject named word for word, and a few
more ways of saying a fact changed.

Each rule is shown with the pair it was made for (the dev_blind_r18 and dev_blind_r19 parts of
bench/data/truth_subjects.json, or a pair of the same shape) and with the pair it must still refuse.
"""
from __future__ import annotations

import pytest

from mnemara.memory.search.claim import claim_of, names_in
from mnemara.memory.search.claim_words import calendar_values, without_lead_in
from mnemara.memory.search.similarity import CONFLICT, DISTINCT, POSSIBLE_COPY, may_conflict, relate
from mnemara.memory.search.subject import says_changed
from mnemara.memory.search.tokenize import tokens


def kind(a: str, b: str) -> str:
    return relate(a, b).kind


# -- openings that announce a note -----------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "rest"), [
    ("FYI the guest Wi-Fi at the office is named NovaGuest.", "the guest Wi-Fi at the office is named NovaGuest."),
    ("btw standup moved to 10.", "standup moved to 10."),
    ("As a reminder, Maya's ballet recital: Sat, June 8, 2 PM.", "Maya's ballet recital: Sat, June 8, 2 PM."),
])
def test_an_opening_that_only_announces_is_read_past(text: str, rest: str) -> None:
    assert without_lead_in(text) == rest


@pytest.mark.parametrize("text", ["The FYI channel is #fyi-eng.", "As a rule, deploys stop on Fridays.", "FYI"])
def test_a_word_inside_the_claim_is_no_opening(text: str) -> None:
    assert without_lead_in(text) == text


# -- short forms -----------------------------------------------------------------------------------------------
def test_a_short_form_gives_the_word_it_stands_for() -> None:
    assert "kubernet" in tokens("the prod k8s cluster") and "birthday" in tokens("jake's bday")


@pytest.mark.parametrize(("a", "b"), [
    ("Jake's birthday is October 2.", "jake's bday = oct 2"),
    ("The prod Kubernetes cluster is in us-east-1.", "Heads up: prod k8s cluster runs in us-east-1 (N. Virginia)."),
    ("The billing service's DB migrations run with Flyway.",
     "We use Flyway to run database migrations for the billing service."),
])
def test_one_fact_in_its_short_and_long_words_is_no_conflict(a: str, b: str) -> None:
    assert kind(a, b) == POSSIBLE_COPY


@pytest.mark.parametrize(("a", "b"), [
    ("Jake's birthday is October 2.", "jake's bday = oct 12"),
    ("The prod Kubernetes cluster is in us-east-1.", "The prod k8s cluster moved to us-west-2."),
    ("The billing service's DB migrations run with Flyway.", "The billing service's database migrations run with Liquibase."),
])
def test_a_short_form_still_carries_a_correction(a: str, b: str) -> None:
    assert kind(a, b) == CONFLICT


def test_a_digit_inside_a_word_is_no_amount() -> None:
    assert claim_of("the prod k8s cluster").numbers == ()
    assert claim_of("the i18n bundle").numbers == ()
    assert claim_of("the build image is node18").numbers  # a number at a word's end is still one


# -- short weekdays and months ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "values"), [
    ("every Sat", {"d6"}),
    ("due in Oct", {"m10"}),
    ("Thurs and Fri", {"d4", "d5"}),
    ("Our wedding venue is the Rosewood Barn.", set()),  # the stem of "wedding" is "wed": no Wednesday
    ("We sat by the window.", set()),  # "sat" written small is the verb
    ("Jan approves expenses.", set()),  # a given name as often as a month
])
def test_the_short_forms_of_days_and_months_are_values(text: str, values: set[str]) -> None:
    assert calendar_values(text) == values


def test_one_date_written_short_is_no_conflict_and_another_day_is() -> None:
    older = "Maya's ballet recital is Saturday, June 8 at 2pm."
    assert kind(older, "As a reminder, Maya's ballet recital: Sat, June 8, 2 PM.") == POSSIBLE_COPY
    assert kind("Maya's ballet recital is on Saturday at 2pm.", "Maya's ballet recital is on Sun at 2pm.") == CONFLICT


# -- the same values in other words ----------------------------------------------------------------------------
@pytest.mark.parametrize(("a", "b"), [
    ("The office guest Wi-Fi network is called NovaGuest.", "FYI the guest Wi-Fi at the office is named NovaGuest."),
    ("Prod database backups run nightly at 2 AM UTC.", "Nightly at 2 AM UTC, the production DB gets backed up."),
    ("Mia's piano lessons are on Wednesdays with Mrs. Hart.", "Piano w/ Mrs. Hart for Mia - Wednesdays."),
    ("The mooring harbour master's number is 0612 448 901.",
     "Noting again that the harbour master for the mooring can be reached at 0612 448 901."),
])
def test_the_same_names_and_amounts_in_other_words_are_a_possible_copy(a: str, b: str) -> None:
    assert kind(a, b) == POSSIBLE_COPY


@pytest.mark.parametrize(("a", "b"), [
    ("The office guest Wi-Fi network is called NovaGuest.", "The office guest Wi-Fi network is called OrionGuest."),
    ("Prod database backups run nightly at 2 AM UTC.", "Nightly at 3 AM UTC, the production DB gets backed up."),
    ("Mia's piano lessons are on Wednesdays with Mrs. Hart.", "Piano w/ Mr. Cole for Mia - Wednesdays."),
    ("Prices go up in March.", "Prices go down in March."),  # "up" against "down" is a change of claim
])
def test_another_name_amount_or_direction_is_still_a_conflict(a: str, b: str) -> None:
    assert kind(a, b) == CONFLICT


# -- names and noun phrases turned round -----------------------------------------------------------------------
def test_title_case_is_no_order_of_names() -> None:
    assert kind("The spare printer toner is in the bottom drawer of the supply cabinet.",
                "Spare Toner For The Printer -> supply cabinet, bottom drawer.") == POSSIBLE_COPY


def test_a_noun_phrase_turned_round_with_for_or_of_is_one_thing() -> None:
    assert kind("The kids' school starts at 8:20 AM.", "School for the kids starts at 08:20.") != CONFLICT
    assert kind("The kids' school starts at 8:20 AM.", "School for the kids starts at 08:45.") == CONFLICT


def test_a_swap_around_a_verb_still_swaps_roles() -> None:
    assert kind("Alice reports to Bob.", "Bob reports to Alice.") == CONFLICT


# -- a subject named word for word before the notes part ---------------------------------------------------------
def test_a_subject_named_word_for_word_makes_what_follows_a_value() -> None:
    older = "The auth service reads its signing secret from env var JWT_SECRET_KEY, sourced from vault path secret/auth/v1."
    newer = "The auth service reads its signing secret from env var AUTH_SIGNING_KEY, sourced from vault path secret/auth/v2."
    assert kind(older, newer) == CONFLICT


def test_a_subject_named_after_a_short_opening_is_still_another_subject() -> None:
    assert kind("The nightly backup for the staging cluster runs at 2am.",
                "The nightly backup for the prod cluster runs at 3am.") == DISTINCT


# -- more ways of saying a fact changed --------------------------------------------------------------------------
@pytest.mark.parametrize(("a", "b"), [
    ("Lena works at the marketing agency downtown.", "Lena quit the agency and took a UX researcher job at a fintech startup."),
    ("Theo's teacher this year is Ms. Brandt in room 12.",
     "Turns out Theo's homeroom is with Mr. Ocampo; Ms. Brandt was only covering for the first week while he was out."),
    ("Jack's orthodontist appointment is on May 8 at 10am.", "Correction: Jack's ortho is May 15 at 2:30pm, not the morning."),
])
def test_quit_turns_out_and_correction_say_a_fact_changed(a: str, b: str) -> None:
    assert kind(a, b) == CONFLICT


def test_those_words_say_no_change_in_a_chat() -> None:
    assert says_changed("Lena quit the agency.")
    assert not says_changed("I sold my old bike last week.", statement=False)


def test_a_german_note_opening_with_die_names_no_person() -> None:
    assert names_in("Die Müllabfuhr kommt jeden Mittwoch.") == frozenset()
    assert kind("Die Müllabfuhr kommt jeden Mittwoch.", "Der Müll wird inzwischen donnerstags abgeholt.") == CONFLICT


# -- where two notes part: an amount with its names, the English "a", a word that says which --------------------------
def test_a_place_giving_an_amount_on_both_sides_is_a_value() -> None:
    assert kind("The user's car insurance is with Admiral for £612 a year.",
                "Car insurance was renewed with Direct Line at £548 a year.") == CONFLICT


@pytest.mark.parametrize(("a", "b"), [
    ("Tier 1 support answers within 1 hour.", "Tier 2 support answers within 8 hours."),  # a number that labels
    ("Level 1 alerts page the on-call engineer.", "Level 3 alerts page the engineering manager."),
])
def test_a_number_that_labels_a_thing_still_names_another_subject(a: str, b: str) -> None:
    assert kind(a, b) == DISTINCT


def test_a_word_right_before_a_shared_name_says_which_one() -> None:
    assert kind("Staging Redis runs on port 6380.", "Production Redis runs on port 6379.") == DISTINCT
    # a doer before what it does to a named thing stays one subject's value (round 4)
    assert kind("Kim runs the Berlin office with a budget of 40k.",
                "Tobias runs the Berlin office with a budget of 55k.") == CONFLICT


# -- an aside added to a note that restates the other ------------------------------------------------------------
@pytest.mark.parametrize(("a", "b"), [
    ("My passport expires in August 2027.", "Passport expiration: August 2027 - renew a few months before then."),
    ("The orders table in the analytics warehouse is partitioned by order_date.",
     "orders in the analytics warehouse is partitioned by order_date; Kenji set it up that way during the Q2 cleanup."),
])
def test_a_restatement_with_an_aside_is_a_possible_copy(a: str, b: str) -> None:
    assert kind(a, b) == POSSIBLE_COPY


@pytest.mark.parametrize(("a", "b"), [
    ("My passport expires in August 2027.", "Passport expiration: August 2029 - renew a few months before then."),
    ("The orders table is partitioned by order_date.", "The orders table is partitioned by order_date; it moved to "
     "monthly partitions in May."),  # the aside says the fact changed
])
def test_an_aside_does_not_hide_a_correction(a: str, b: str) -> None:
    assert kind(a, b) == CONFLICT


def test_an_aside_that_narrows_the_claim_is_no_detail() -> None:
    base = "Redis runs on port 6379 in every environment."
    assert kind(base, "Redis runs on port 6379 in every environment; not on the replicas.") == CONFLICT
    assert kind(base, "Redis runs on port 6379 in every environment - staging only.") == CONFLICT


# -- a change note shares only a verb of any subject or a time of day ---------------------------------------------
@pytest.mark.parametrize(("a", "b"), [
    ("Dad takes lisinopril 10mg every morning.", "Since October, Emma takes bus route 22 instead."),
    ("Mom takes levothyroxine 50mcg every morning.", "Release branch is release/2.5 as of this morning."),
    ("New hires get a laptop on their first day.", "New one for the office wireless: maple-77."),
])
def test_a_verb_or_time_of_day_alone_makes_no_shared_subject(a: str, b: str) -> None:
    assert not may_conflict(a, b) and kind(a, b) != CONFLICT


def test_a_shared_subject_word_beside_them_still_does() -> None:
    assert kind("Dad takes lisinopril 10mg every morning.", "Since October, Dad takes lisinopril 20mg instead.") == CONFLICT


def test_longer_than_is_no_change() -> None:
    assert not says_changed("The user prefers an aisle seat on any flight longer than three hours.")
    assert says_changed("The user no longer flies with Ryanair.")
    assert says_changed("We don't use Jenkins any longer.")
