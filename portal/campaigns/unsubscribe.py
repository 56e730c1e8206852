"""The preference page behind every campaign email's footer link: no sign-in, the signed token says who.

GET shows the page: a switch (a checkbox) per topic, "no campaigns at all", and one button to
stop the topic of the campaign the link came from. A link scanner that follows GET changes nothing.

POST to the link itself is RFC 8058's one-click: a mail client sends `List-Unsubscribe=One-Click`
with no cookie and no CSRF token, so this one view is exempt from CSRF; the token is the
authority, and all it can do is stop the topic of that campaign for the one person it names.
Saving the page's choices is an ordinary form (with its CSRF token): the page is in a browser.
Nothing here ever touches transactional email.
"""

from __future__ import annotations

import sqlalchemy as sa
from flask import Blueprint, render_template

from portal.campaigns import operations, queries, tokens
from portal.campaigns.forms import PreferencesForm
from portal.campaigns.topics import TopicError, opted_out_of
from portal.web.access import public
from portal.web.extensions import csrf, portal_context
from portal.web.i18n import current_language

bp = Blueprint("unsubscribe", __name__, url_prefix="/unsubscribe")


def _person(token: str):
    ctx = portal_context()
    found = tokens.read_token(ctx.settings.secret_key, token)
    if found is None:
        return None
    user_id, campaign_id = found
    with ctx.db.read() as conn:
        return conn.execute(
            sa.text(
                "SELECT u.id, u.email, :c AS campaign_id, cp.topic AS campaign_topic, "
                "(x.user_id IS NOT NULL) AS unsubscribed FROM users u "
                "LEFT JOIN campaign_unsubscribes x ON x.user_id = u.id "
                "LEFT JOIN campaigns cp ON cp.id = :c WHERE u.id = :u"
            ),
            {"u": user_id, "c": campaign_id},
        ).first()


def _unknown():
    return render_template("unsubscribe/unknown.html"), 404


def _page(token: str, person, form: PreferencesForm, status: int = 200, **said):
    db = portal_context().db
    with db.read() as conn:
        out = opted_out_of(conn, person.id)
        unsubscribed = conn.execute(
            sa.text("SELECT 1 FROM campaign_unsubscribes WHERE user_id = :u"), {"u": person.id}
        ).first()
    options = queries.topic_options(db, current_language())
    return render_template(
        "unsubscribe/page.html",
        token=token,
        email=person.email,
        topics=[(code, words, code not in out) for code, words in options],
        unsubscribed=unsubscribed is not None,
        link_topic=dict(options).get(person.campaign_topic) if person.campaign_topic not in out else None,
        form=form,
        **said,
    ), status


@bp.get("/<token>")
@public
def confirm(token: str):
    person = _person(token)
    if person is None:
        return _unknown()
    return _page(token, person, PreferencesForm())


@bp.post("/<token>")
@public
@csrf.exempt
def one_click(token: str):
    person = _person(token)
    if person is None:
        return _unknown()
    topic = operations.opt_out_of_campaign_topic(portal_context().db, user_id=person.id, campaign_id=person.campaign_id)
    if topic is None:  # the campaign is gone: the link still stops every campaign, as it always did
        operations.unsubscribe(portal_context().db, user_id=person.id)
    return _page(
        token,
        person,
        PreferencesForm(),
        stopped=dict(queries.topic_options(portal_context().db, current_language())).get(topic),
        stopped_all=topic is None,
    )


@bp.post("/<token>/preferences")
@public
def preferences(token: str):
    person = _person(token)
    if person is None:
        return _unknown()
    form = PreferencesForm()
    form.topics.choices = queries.topic_options(portal_context().db, current_language())
    if not form.validate_on_submit():
        return _page(token, person, form, 400, refused=bool(form.topics.errors), out_of_date=not form.topics.errors)
    try:
        operations.set_preferences(
            portal_context().db,
            user_id=person.id,
            wanted=set(form.topics.data or ()),
            no_campaigns=bool(form.no_campaigns.data),
            campaign_id=person.campaign_id if person.campaign_topic else None,  # a campaign since deleted: none
        )
    except TopicError:
        return _page(token, person, form, 400, refused=True)
    return _page(token, person, PreferencesForm(), saved=True)
