import logging

from flask import redirect, render_template, request, url_for

from portal.access import public
from portal.db import AmbiguousCommitError, DatabaseBusyError
from portal.demo import bp, service
from portal.demo.forms import DemoRequestForm
from portal.extensions import limiter
from portal.services import get_db, get_redis, get_settings

log = logging.getLogger(__name__)

# Per client: five accepted requests an hour, and a ceiling on all attempts (typos included).
ACCEPTED_LIMIT = "5 per hour"
ATTEMPT_LIMIT = "30 per hour"
BUSY = "We are very busy right now and nothing was saved. Please send the form again in a moment."
UNCONFIRMED = ("We could not confirm your request was saved. Please wait a minute and send it again: "
               "if it did arrive, we will not record it twice.")


def _accepted(response) -> bool:
    return response.status_code == 302


@bp.route("/demo", methods=["GET", "POST"])
@limiter.limit(ACCEPTED_LIMIT, methods=["POST"], deduct_when=_accepted, scope="demo-accepted")
@limiter.limit(ATTEMPT_LIMIT, methods=["POST"], scope="demo-attempts")
@public
def request_demo():
    form = DemoRequestForm()
    if form.is_submitted() and form.website.data:
        log.info("demo form: honeypot filled in; answered as accepted, nothing written")
        return redirect(url_for(".thanks"))
    if form.validate_on_submit():
        try:
            service.request_demo(get_db(), get_redis(), get_settings(), name=form.name.data,
                                 email=form.email.data, company=form.company.data, message=form.message.data)
        except DatabaseBusyError:
            form.form_errors.append(BUSY)
        except AmbiguousCommitError:
            form.form_errors.append(UNCONFIRMED)
        except service.DemoRequestError as error:
            form.form_errors.append(str(error))
        else:
            return redirect(url_for(".thanks"))
    return render_template("demo/request.html", form=form), 200 if request.method == "GET" else 400


@bp.get("/demo/thanks")
@public
def thanks():
    return render_template("demo/thanks.html")
