"""What a campaign is about: its topic, which a recipient may opt out of on their preference page.

The topics are rows of `campaign_topics` (seeded by migration 0045: programme news, partner news,
events); a campaign's `topic` is one of their codes. Their words are here, marked for the
catalogue, so each page says them in its reader's language. A code with no words here is shown
as it is (a topic added by migration before its words).

Opting out of a topic, or of every campaign, leaves the person out of a campaign of that topic
when its list is fixed and when each batch of rows is written (audiences.py, sending.py), and
cancels a row already written that nothing can have sent (operations.py). Transactional email
never reads either table.
"""

from __future__ import annotations

import sqlalchemy as sa

from portal.core.i18n import ENGLISH, N_, translate
from portal.core.text import InputError

PROGRAMME_NEWS = "programme_news"
WORDS = {
    "programme_news": N_("Programme news"),
    "partner_news": N_("Partner news"),
    "events": N_("Events"),
}
NOT_A_TOPIC = N_("Choose a topic from the list.")


class TopicError(InputError):
    """A topic that does not exist; `message` is the catalogue's English (a page translates it)."""

    def __init__(self, message: str = NOT_A_TOPIC):
        super().__init__(message)
        self.message, self.values = message, {}


def topic_codes(conn: sa.Connection) -> list[str]:
    """Every topic's code, in the order pages show them."""
    return list(conn.execute(sa.text("SELECT code FROM campaign_topics ORDER BY position")).scalars())


def check_topic(conn: sa.Connection, topic: str) -> str:
    if topic not in topic_codes(conn):
        raise TopicError()
    return topic


def label(topic: str, language: str = ENGLISH) -> str:
    words = WORDS.get(topic)
    return translate(language, words) if words else topic


def opted_out_of(conn: sa.Connection, user_id: int) -> set[str]:
    return set(
        conn.execute(sa.text("SELECT topic FROM campaign_topic_optouts WHERE user_id = :u"), {"u": user_id}).scalars()
    )
