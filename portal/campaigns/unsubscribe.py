"""The unsubscribe link in every campaign email: no sign-in, the signed token says who.

GET shows a page with one button (a link scanner that follows GET changes nothing). POST is
RFC 8058's one-click: a mail client sends `List-Unsubscribe=One-Click` with no cookie and no
CSRF token, so this one view is exempt from CSRF; the token is the authority, and all it can do
is stop campaigns for the one person it names. The page after it offers to re-subscribe.
"""

from __future__ import annotations

import sqlalchemy as sa
from flask import Blueprint, render_template

from portal.campaigns import operations, tokens
from portal.campaigns.forms import ResubscribeForm
from portal.web.access import public
from portal.web.extensions import csrf, portal_context

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
                "SELECT u.id, u.email, :c AS campaign_id, (x.user_id IS NOT NULL) AS unsubscribed FROM users u "
                "LEFT JOIN campaign_unsubscribes x ON x.user_id = u.id WHERE u.id = :u"
            ),
            {"u": user_id, "c": campaign_id},
        ).first()


def _unknown():
    return render_template("unsubscribe/unknown.html"), 404


@bp.get("/<token>")
@public
def confirm(token: str):
    person = _person(token)
    if person is None:
        return _unknown()
    return render_template(
        "unsubscribe/page.html",
        token=token,
        email=person.email,
        unsubscribed=bool(person.unsubscribed),
        form=ResubscribeForm(),
    )


@bp.post("/<token>")
@public
@csrf.exempt
def one_click(token: str):
    person = _person(token)
    if person is None:
        return _unknown()
    operations.unsubscribe(portal_context().db, user_id=person.id, campaign_id=person.campaign_id)
    return render_template(
        "unsubscribe/page.html", token=token, email=person.email, unsubscribed=True, form=ResubscribeForm(), just=True
    )


@bp.post("/<token>/resubscribe")
@public
def resubscribe(token: str):
    person = _person(token)
    if person is None:
        return _unknown()
    form = ResubscribeForm()
    if not form.validate_on_submit():
        return render_template(
            "unsubscribe/page.html", token=token, email=person.email, unsubscribed=True, form=form
        ), 400
    operations.resubscribe(portal_context().db, user_id=person.id)
    return render_template(
        "unsubscribe/page.html", token=token, email=person.email, unsubscribed=False, form=form, back=True
    )
