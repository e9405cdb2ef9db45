"""Round 11 of issue 40: amounts written another way, hyphenated words, and a change dated by a hyphenated event.

Each rule is shown with the pair it was made for (the dev_blind_r16 and dev_blind_r17 parts of
bench/data/truth_subjects.json, or a pair of the same shape) and with the pair it must still refuse.
"""
from __future__ import annotations

import pytest

from mnemara.memory.search.claim import claim_of
from mnemara.memory.search.claim_words import SINCE_RE
from mnemara.memory.search.restate import restates
from mnemara.memory.search.similarity import CONFLICT, POSSIBLE_COPY, claim_differences, may_conflict, relate


def kind(a: str, b: str) -> str:
    return relate(a, b).kind


# -- one length in two units -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("a", "b"), [
    ("The trail is 5 km.", "The trail is 5000 metres."),
    ("The shelf is 1.2 m long.", "The shelf is 120 cm long."),
    ("The cable is 2.5 metres.", "The cable is 2500 mm."),
])
def test_one_length_in_two_metric_units_is_one_value(a: str, b: str) -> None:
    assert not any(d.startswith("numbers differ") for d in claim_differences(a, b))
    assert kind(a, b) != CONFLICT


@pytest.mark.parametrize(("a", "b"), [
    ("The trail is 5 km.", "The trail is 6 km."),
    ("The shelf is 1.2 m long.", "The shelf is 150 cm long."),
    ("The trail is 5 km.", "The trail is 5 miles."),  # no conversion across systems: another value
])
def test_another_length_is_still_a_correction(a: str, b: str) -> None:
    assert kind(a, b) == CONFLICT


def test_an_m_after_a_number_is_metres_only_before_a_length_word() -> None:
    assert ("3.5", "metre") in claim_of("The kayak is 3.5 m long.").numbers
    assert ("512", "mb") in claim_of("The heap is set to 512m.").numbers


def test_a_length_unit_stays_a_word_of_the_subject() -> None:
    # "km" both notes write links a correction that shares little else (the dev_blind_r6 chain)
    assert may_conflict("Bumped the weekly running goal up to 20 km.",
                        "After the knee injury I cut my weekly target to 8 km.")


# -- a number and its unit in one token --------------------------------------------------------------------------
def test_3x_is_three_times() -> None:
    assert kind("The user runs three times a week.", "The user runs 3x per week.") != CONFLICT
    assert "3x" not in claim_of("The user runs 3x per week.").entities


def test_another_count_of_times_is_a_correction() -> None:
    assert kind("The user runs three times a week.", "The user runs 4x per week.") == CONFLICT


def test_an_identifier_with_digits_is_still_a_name() -> None:
    assert "s3" in claim_of("Backups go to S3.").entities
    assert "ds920" in claim_of("The NAS is a Synology DS920.").entities


# -- a compound claims by its head --------------------------------------------------------------------------------
def test_a_lead_in_with_a_compound_verb_is_a_restatement() -> None:
    a = "The car's next service is due at 60,000 km."
    b = "Double-checked the booklet: the car's next service is due at 60,000 km."
    assert restates(a, b)
    assert kind(a, b) == POSSIBLE_COPY


def test_a_compound_whose_head_claims_still_claims() -> None:
    assert not restates("The nightly backup job runs on the NAS.", "Re-enabled: the nightly backup job runs on the NAS.")
    assert not restates("The user's passport is in the safe.", "Double-checked, not found: the user's passport is in the safe.")


# -- a change dated by an event -------------------------------------------------------------------------------------
def test_a_hyphenated_event_dates_a_change() -> None:
    assert SINCE_RE.search("Since the February check-up, the user takes 100 mg of sertraline daily.")
    assert kind("The user takes 50 mg of sertraline daily.",
                "Since the February check-up, the user takes 100 mg of sertraline daily.") == CONFLICT


def test_since_giving_a_reason_is_still_no_date() -> None:
    assert not SINCE_RE.search("Since the check-up is free, the user books one every year.")


# -- the same values in other words ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("a", "b"), [
    ("TLS certificates are issued by Let's Encrypt.", "TLS certificates are issued by Let's Encrypt for all environments."),
    ("The mobile team's retro happens every other Friday.", "The mobile team does its retrospective biweekly, on Fridays."),
    ("The car's next oil change is due at 45,000 miles.",
     "Reminder: the next oil change is due when the car hits 45,000 miles."),
    ("The nightly ETL job loads sales data into BigQuery and then emails a summary to finance.",
     "Nightly ETL: sales data -> BigQuery, then summary emailed to finance."),
    ("Pepper the rabbit gets a vet check every six months.",  # every amount the same: a name added is detail
     "Pepper the rabbit gets a vet check every six months at Oakfield Vets."),
])
def test_the_same_values_in_other_words_are_a_possible_copy(a: str, b: str) -> None:
    relation = relate(a, b)
    assert relation.kind == POSSIBLE_COPY, relation.describe()


@pytest.mark.parametrize(("a", "b"), [
    ("The payments API server is up.", "The payments API server is down."),  # a claim-bearing word, not a wording
    ("Traffic goes from Berlin to Paris.", "Traffic goes from Paris to Berlin."),  # the order of names is the claim
    ("Ana pays Ben 50 euros.", "Ben pays Ana 50 euros."),
    ("The nightly ETL writes to the raw schema.", "The nightly ETL writes to the staging schema."),  # one word put for another
    ("Admins can deploy.", "Admins can deploy to staging."),  # no value both give: added detail may narrow the claim
    ("The retry limit is 3.", "The retry limit is 3 per hour."),
    ("Jenkins runs the deploys.", "Jenkins now runs the deploys on the new cluster."),  # says the fact changed
    ("The pager goes to Alice for 2 weeks.", "The pager goes to Bob for 2 weeks."),  # a name put for another
    ("Backups go to the Frankfurt bucket at 2am.", "Backups go to the Dublin bucket at 2am."),
    ("The pager goes to Alice for 2 weeks.", "The pager goes to Alice for 3 weeks at Acme."),  # an amount changed
])
def test_a_changed_value_order_or_claim_word_stays_a_conflict(a: str, b: str) -> None:
    assert kind(a, b) == CONFLICT


# -- ordinals --------------------------------------------------------------------------------------------------------
def test_an_ordinal_word_is_its_number() -> None:
    assert kind("Our office is on the fourth floor.", "Our office is on the 4th floor.") != CONFLICT
    assert kind("Our office is on the 4th floor of 22 Baker Street.", "We're based at 22 Baker Street, fourth floor.") \
        != CONFLICT
    assert "4th" not in claim_of("Our office is on the 4th floor.").entities


def test_another_ordinal_is_a_correction() -> None:
    assert kind("Our office is on the fourth floor.", "Our office is on the fifth floor.") == CONFLICT
    assert kind("Rent is due on the 1st.", "Rent is due on the 3rd.") == CONFLICT


# -- "both X and Y" ----------------------------------------------------------------------------------------------------
def test_both_before_a_pair_claims_nothing_the_and_does_not_say() -> None:
    assert kind("Hamid speaks fluent Farsi and Arabic.", "Hamid is fluent in both Farsi and Arabic.") == POSSIBLE_COPY
    assert kind("The user's accountant, Deborah Lin, handles both the personal and the business tax returns.",
                "Deborah Lin does the user's personal and business taxes.") != CONFLICT


def test_a_pair_that_adds_a_member_is_still_a_correction() -> None:
    assert kind("Hamid speaks fluent Farsi.", "Hamid speaks both Farsi and Arabic.") == CONFLICT


# -- a length of time said in words ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("a", "b"), [
    ("Sessions are limited to 30 minutes.", "Sessions are limited to half an hour."),
    ("The flight is 90 minutes.", "The flight is an hour and a half."),
    ("The password changes every three months.", "The password changes every quarter."),
    ("Sauna sessions at the user's club are limited to 15 minutes.",
     "At the user's club, sauna sessions are capped at a quarter of an hour."),
])
def test_a_length_of_time_in_words_is_its_number(a: str, b: str) -> None:
    assert kind(a, b) != CONFLICT


def test_another_length_of_time_in_words_is_a_correction() -> None:
    assert kind("Sessions are limited to 20 minutes.", "Sessions are limited to half an hour.") == CONFLICT
    assert kind("The password changes every month.", "The password changes every quarter.") == CONFLICT
