"""One list of event kinds: ``trash_env.engine.EVENT_KINDS`` (and ``CARD_EVENT_KINDS``, the
kinds whose ``card`` field is a card). Every table keyed by kind covers exactly that list, so a
new kind fails here until the text, the game log and the OpenSpiel tokens know it."""

from __future__ import annotations

import pytest

from trash_env.engine import CARD_EVENT_KINDS, EVENT_KINDS, Event
from trash_env.rules import Rules
from trash_env.text import describe_event


def test_card_kinds_are_event_kinds():
    assert CARD_EVENT_KINDS < set(EVENT_KINDS)


@pytest.mark.parametrize("kind", EVENT_KINDS)
def test_the_text_has_a_sentence_for_every_kind_and_names_cards_only_where_they_are(kind):
    said = describe_event(Event(kind, 0, 11, 3))  # card 11: a Jack where the field is a card
    assert said != kind
    assert ("Jack" in said) == (kind in CARD_EVENT_KINDS), said


def test_the_game_log_checks_every_kind_and_its_cards():
    from agents.play.game_log import _CARD, _NUMBER, _event_fields

    table = _event_fields(Rules())
    assert list(table) == list(EVENT_KINDS)
    # a rank, or (place, swap) a number 1..10: the card's own slot
    cards = {kind for kind, (_, card, _) in table.items() if card in (_CARD, _NUMBER)}
    assert cards == CARD_EVENT_KINDS


def test_the_openspiel_tokens_have_a_letter_for_every_kind():
    spiel = pytest.importorskip("trash_env.spiel", reason="the OpenSpiel game needs open_spiel")
    assert list(spiel._KIND_LETTER) == list(EVENT_KINDS)
    assert len(set(spiel._KIND_LETTER.values())) == len(EVENT_KINDS)
