"""Round 7 of issue 40: a thing under its other everyday name, a child's lessons in another language, a reminder
that opens with "Don't forget", a closing aside that gives a measure, one word translated, a change word both
siblings write, and "work" as whose a thing is.

Each rule is shown with the pair it was made for (the dev_blind_r8 part of bench/data/truth_subjects.json) and
with the pair it must still refuse.
"""
from __future__ import annotations

import pytest

from mnemara.memory.search.claim_words import english
from mnemara.memory.search.similarity import CONFLICT, DISTINCT, POSSIBLE_COPY, may_conflict, relate
from mnemara.memory.search.subject import change_marks, different_subject


@pytest.mark.parametrize("older, newer", [
    ("I'm vegetarian.", "I no longer avoid fish, so I'd call myself pescatarian."),
    ("Our code reviews require two approvals before merging.",
     "A single sign-off is enough to merge a pull request these days."),
    ("Our message queue is RabbitMQ.", "The event bus we use is Kafka."),
    ("The monthly infrastructure budget is $8,000.", "The monthly cloud spend cap was raised to $11,500."),
    ("The internal wiki is on Confluence at wiki.corp.local.", "Our knowledge base moved to Notion at notion.so/acme-eng."),
    ("My commute is the 7:12 train from Maplewood.", "To get to work I take the 6:50 bus from the Grove Street stop."),
    ("My daughter's swimming lessons are on Saturday mornings.",
     "As aulas de natação da minha filha passaram para domingo à tarde."),
])
def test_a_correction_under_the_other_name_of_its_subject_is_a_conflict(older: str, newer: str) -> None:
    assert may_conflict(older, newer)
    assert relate(older, newer).kind == CONFLICT


@pytest.mark.parametrize("older, newer", [
    ("Our message queue is RabbitMQ.", "Our build server is Jenkins."),
    ("The internal wiki is on Confluence.", "The wiki.corp.local certificate expires in May."),
    ("My daughter's swimming lessons are on Saturday mornings.", "My son's piano lessons are on Tuesdays."),
])
def test_the_other_names_join_nothing_else(older: str, newer: str) -> None:
    assert relate(older, newer).kind != CONFLICT


def test_a_reminder_that_opens_with_dont_forget_restates() -> None:
    assert relate("My sister's birthday is on August 19.",
                  "Don't forget, my sister's birthday is on August 19.").kind == POSSIBLE_COPY
    # a "don't" that is no reminder still negates
    assert relate("We deploy on Fridays.", "Don't, we deploy on Fridays.").kind != POSSIBLE_COPY
    assert relate("We deploy on Fridays.", "We don't deploy on Fridays.").kind == CONFLICT


def test_a_closing_aside_that_gives_a_measure_to_a_note_without_one_restates() -> None:
    assert relate("The cat's vet is Dr. Moreau at Riverside Animal Clinic.",
                  "The cat's vet is Dr. Moreau at Riverside Animal Clinic, about ten minutes from our place."
                  ).kind == POSSIBLE_COPY
    # a note that states an amount: another amount in the aside may replace it
    assert relate("The timeout is 30 s.", "The timeout is 30 s, 45 s on staging.").kind == CONFLICT
    # a measure that is the claim's limit, or a count of things, claims
    assert relate("Refunds need approval.", "Refunds need approval, within 3 business days.").kind == CONFLICT
    assert relate("Trash goes out Wednesday night.", "Trash goes out Wednesday night, like 2 other streets.").kind \
        == CONFLICT
    # ... and a measure woven into the sentence narrows it
    assert relate("The vet is Dr. Moreau.", "The vet is Dr. Moreau ten minutes away.").kind != POSSIBLE_COPY


def test_one_word_translated_is_a_possible_copy_not_a_conflict() -> None:
    assert english("The Grafana dashboards are served on port 3000.")
    assert not english("Die Grafana-Dashboards laufen auf Port 3000.")
    assert relate("The Grafana dashboards are served on port 3000.",
                  "Die Grafana-Dashboards laufen auf Port 3000.").kind == POSSIBLE_COPY
    # in one language a word swapped is a claim changed
    assert relate("The Grafana dashboards are served on port 3000.",
                  "The Grafana dashboards are proxied on port 3000.").kind == CONFLICT
    # and another language with another value stays a conflict
    assert relate("The Grafana dashboards are served on port 3000.",
                  "Die Grafana-Dashboards laufen auf Port 3001.").kind == CONFLICT


def test_a_change_word_both_siblings_write_is_part_of_their_pattern() -> None:
    a = "The front door smart lock batteries were last changed in February."
    b = "The garage smart lock batteries were last changed in June."
    assert change_marks(a) == change_marks(b) == frozenset({"changed"})
    assert different_subject(a, b)
    assert relate(a, b).kind == DISTINCT
    # one note saying it changed is still the same subject changed
    assert not different_subject("The front door lock code is 4412.", "The front door lock code changed to 9031.")
    assert relate("The front door lock code is 4412.", "The front door lock code changed to 9031.").kind == CONFLICT


def test_work_names_whose_a_thing_is() -> None:
    assert relate("My work laptop runs macOS Sonoma.", "My personal laptop runs Fedora 40.").kind == DISTINCT
    assert relate("My work laptop runs macOS Sonoma.", "My work laptop runs macOS Sequoia now.").kind == CONFLICT


def test_a_closing_consequence_restates() -> None:
    assert relate("My mother's flight lands at 7:20 pm on Saturday.",
                  "My mother's flight lands at 7:20 pm on Saturday, so I should leave the house early.").kind \
        == POSSIBLE_COPY
    # a consequence that changes the value still claims
    assert relate("My mother's flight lands at 7:20 pm on Saturday.",
                  "My mother's flight lands at 7:20 pm on Saturday, so it moved to Sunday.").kind == CONFLICT


def test_begin_is_start_and_not_stop() -> None:
    assert relate("The code freeze starts on December 18.", "December 18 is when the code freeze begins.").kind \
        != CONFLICT
    assert relate("The code freeze begins on December 18.", "The code freeze stops on December 18.").kind == CONFLICT


def test_a_cadence_in_another_language_is_read_as_one() -> None:
    assert relate("The quarterly business review is with the client Larsen Group.",
                  "La revisión trimestral de negocio es con el cliente Larsen Group.").kind == POSSIBLE_COPY
    assert relate("The standup is daily.", "Le standup est hebdomadaire.").kind == CONFLICT


@pytest.mark.parametrize("older, newer", [
    ("I rent a one-bedroom flat in Leeds.", "Bought a house in York, so no more paying a landlord."),
    ("My landlord is Mr. Greene.", "The building was sold, so rent goes to Harbor Property Management from here on."),
    ("My daughter's piano lessons are on Tuesdays.", "Emma's music teacher moved her slot to Thursday afternoons."),
])
def test_a_landlord_is_the_rent_and_an_instrument_is_music(older: str, newer: str) -> None:
    assert relate(older, newer).kind == CONFLICT


def test_the_rent_and_music_aliases_keep_siblings_apart() -> None:
    assert relate("My daughter's piano lessons are on Tuesdays.", "My son's guitar lessons are on Fridays.").kind \
        != CONFLICT
    assert not change_marks("The landlord lives upstairs.")
    assert "from now on" in change_marks("From now on the landlord collects rent by transfer.")
    assert change_marks("From here on the landlord collects rent by transfer.") == frozenset({"from here on"})
