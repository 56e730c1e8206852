"""An admin's decision: recorded once with its email, in one transaction; final decisions stay final."""

import json
import re
from dataclasses import replace

import pytest
import sqlalchemy as sa
from sqlalchemy import event

from portal.applications import operations
from portal.core import clock
from portal.core.db import AmbiguousCommitError, Database, DatabaseBusyError
from portal.email_families import FAMILIES
from portal.invitations import tokens


def decision_email(outbox_rows, settings, **filters):
    (row,) = outbox_rows(family="application_decision", **filters)
    return row, FAMILIES["application_decision"].render(json.loads(row["template_input"]), settings, now=clock.utcnow())


def test_decline_records_one_decision_and_one_email(submit, decide, count, outbox_rows, settings):
    application = submit()
    outcome = decide(application.application_id, "decline", note="We focus on companies in Norway this year.")

    assert not outcome.replayed and outcome.sequence == 1
    assert count("application_decisions") == 1
    assert count("company_applications", "state = 'declined' AND decision_count = 1") == 1
    row, email = decision_email(outbox_rows, settings)
    assert row["recipient"] == "ingrid@fjord.example"
    assert row["idempotency_key"] == f"application:{application.application_id}:decision:1"
    assert email.subject == "About your TEEI partner application"
    assert "We focus on companies in Norway this year." in email.text
    assert "/invitations/accept/" not in email.text
    assert count("companies", "name = 'Fjord Analytics AS'") == 0, "a decline creates no company"


def test_a_replayed_decision_records_nothing_more(submit, decide, count, outbox_rows):
    application = submit()
    first = decide(application.application_id, "decline", note="Not this year.", decisions_seen=0)
    again = decide(application.application_id, "decline", note="Not this year.", decisions_seen=0)
    without_seen = decide(application.application_id, "decline", note="Not this year.")

    assert again.replayed and without_seen.replayed and again.sequence == first.sequence == 1
    assert count("application_decisions") == 1
    assert len(outbox_rows(family="application_decision")) == 1


def test_a_replayed_request_for_information_sends_one_email(submit, decide, count, outbox_rows):
    application = submit()
    decide(application.application_id, "request_info", note="How many offices?", decisions_seen=0)
    decide(application.application_id, "request_info", note="How many offices?", decisions_seen=0)

    assert count("application_decisions") == 1 and len(outbox_rows(family="application_decision")) == 1


def test_request_info_may_be_followed_by_a_final_decision(submit, decide, count, outbox_rows, settings):
    application = submit()
    decide(application.application_id, "request_info", note="How many offices?", decisions_seen=0)
    final = decide(application.application_id, "decline", note="Thank you for the answer.", decisions_seen=1)

    assert final.sequence == 2 and not final.replayed
    assert count("application_decisions") == 2
    keys = [r["idempotency_key"] for r in outbox_rows(family="application_decision")]
    assert sorted(keys) == [f"application:{application.application_id}:decision:{n}" for n in (1, 2)]


def test_request_info_needs_a_note(submit, decide, count):
    application = submit()
    with pytest.raises(operations.ApplicationError, match="what information you need"):
        decide(application.application_id, "request_info", note="  ")
    assert count("application_decisions") == 0


@pytest.mark.parametrize("final", ["approve", "decline"])
def test_a_decision_on_a_closed_application_is_refused_and_writes_nothing(submit, decide, count, outbox_rows, final):
    application = submit()
    decide(application.application_id, final)
    before = (count("application_decisions"), len(outbox_rows()), count("invitations"), count("companies"))

    for later in ("approve", "decline", "request_info"):
        if later == final:
            continue
        with pytest.raises(operations.DecisionRefused, match="already"):
            decide(application.application_id, later, note="Changed my mind.")
    assert (count("application_decisions"), len(outbox_rows()), count("invitations"), count("companies")) == before


def test_a_decision_from_an_out_of_date_page_is_refused(submit, decide, count):
    application = submit()
    decide(application.application_id, "request_info", note="How many offices?", decisions_seen=0)
    with pytest.raises(operations.DecisionRefused, match="changed while you had it open"):
        decide(application.application_id, "request_info", note="Another question", decisions_seen=0)
    assert count("application_decisions") == 1


def test_approve_creates_the_company_invites_the_contact_and_emails_the_link(
    submit, decide, db, count, outbox_rows, settings, admin_id
):
    application = submit()
    outcome = decide(application.application_id, "approve", note="Welcome aboard!")

    with db.read() as conn:
        company = conn.execute(sa.text("SELECT id, name FROM companies WHERE name_key = 'fjord analytics as'")).one()
        invitation = conn.execute(sa.text("SELECT * FROM invitations")).mappings().one()
        stored = conn.execute(
            sa.text("SELECT state, company_id FROM company_applications WHERE id = :id"), {"id": outcome.application_id}
        ).one()
        decision = conn.execute(sa.text("SELECT invitation_id FROM application_decisions")).scalar_one()
    assert stored.state == "approved" and stored.company_id == company.id
    assert invitation["company_id"] == company.id and invitation["email"] == "ingrid@fjord.example"
    assert invitation["role"] == "manager" and invitation["programme"] is None
    assert invitation["invited_by"] == admin_id and decision == invitation["id"]

    row, email = decision_email(outbox_rows, settings)
    assert json.loads(row["template_input"])["token_nonce"] == invitation["token_nonce"]
    assert email.subject.startswith("Welcome to TEEI")
    link = re.search(r"(https?://\S+/invitations/accept/([\w-]+))", email.text)
    assert link, email.text
    assert f'href="{link.group(1)}"' in email.html
    assert tokens.token_hash(link.group(2)) == invitation["token_hash"], "the link opens this invitation"
    assert "Welcome aboard!" in email.text


def test_approving_an_existing_companys_name_reuses_the_company(submit, decide, make_user, count):
    make_user("manager", company="Fjord Analytics AS")
    application = submit()
    decide(application.application_id, "approve")
    assert count("companies", "name_key = 'fjord analytics as'") == 1
    assert count("invitations") == 1


def test_a_busy_database_writes_nothing(submit, ctx, settings, admin_id, count):
    application = submit()
    impatient = Database(settings.database_url, busy_timeout_ms=20)
    holder = Database(settings.database_url)
    try:
        with holder.write():
            with pytest.raises(DatabaseBusyError):
                operations.record_decision(
                    replace(ctx, db=impatient),
                    application_id=application.application_id,
                    decision="decline",
                    note="",
                    admin_user_id=admin_id,
                )
    finally:
        impatient.dispose()
        holder.dispose()
    assert count("application_decisions") == 0
    assert count("company_applications", "state = 'new'") == 1


def test_an_unconfirmed_commit_reaches_the_caller_and_is_not_replayed(submit, ctx, settings, count):
    """A commit that fails after the statements ran is ambiguous: the caller hears about it.

    Deferred foreign keys make a real COMMIT fail: the decision names an admin who does not exist.
    """
    application = submit()
    deferred = Database(settings.database_url)
    event.listen(deferred.engine, "begin", lambda conn: conn.exec_driver_sql("PRAGMA defer_foreign_keys=ON"))
    try:
        with pytest.raises(AmbiguousCommitError):
            operations.record_decision(
                replace(ctx, db=deferred),
                application_id=application.application_id,
                decision="decline",
                note="",
                admin_user_id=987654,
            )
    finally:
        deferred.dispose()
    assert count("application_decisions") == 0, "here the commit did fail; nothing was retried"


def test_an_applicant_without_an_account_gets_the_decision_in_the_language_they_applied_in(
    client, auth, decide, outbox_rows, settings
):
    """The form sent from a Norwegian browser: the application keeps that language, and the decision,
    written days later by an English-reading admin, reaches the applicant (no account) in Norwegian."""
    token = auth.csrf_token("/apply")
    form = {
        "company_name": "Fjord Analytics AS",
        "contact_name": "Ingrid Dahl",
        "contact_email": "ingrid@fjord.example",
        "employee_count": "120",
        "message": "",
        "website": "",
        "csrf_token": token,
    }
    response = client.post("/apply", data=form, headers={"Accept-Language": "nb-NO,nb;q=0.9,en;q=0.5"})
    assert response.status_code in (200, 302)
    (application,) = outbox_rows(family="application_received")
    application_id = int(application["idempotency_key"].split(":")[1])

    decide(application_id, "decline", note="Ikke i år.")

    row, email = decision_email(outbox_rows, settings)
    assert json.loads(row["template_input"])["language"] == "nb"
    assert email.subject == "Om partnersøknaden din til TEEI"


def test_an_applicant_with_an_account_gets_the_decision_in_their_own_language(
    submit, decide, make_user, db, outbox_rows, settings
):
    """The account's own choice wins over the page the application was sent from."""
    make_user("manager", company="Other AS", email="ingrid@fjord.example")
    with db.write() as conn:
        conn.execute(sa.text("UPDATE users SET language = 'en' WHERE email = 'ingrid@fjord.example'"))
    application = submit(language="nb")

    decide(application.application_id, "decline", note="Not this year.")

    row, email = decision_email(outbox_rows, settings)
    assert json.loads(row["template_input"])["language"] == "en"
    assert email.subject == "About your TEEI partner application"
