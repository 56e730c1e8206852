from flask import Blueprint, redirect, render_template, request, url_for

from portal.demo import operations
from portal.demo.forms import DemoRequestForm
from portal.web.access import public
from portal.web.extensions import portal_context
from portal.web.public_forms import accept_public_form, public_form_limits

bp = Blueprint("demo", __name__)

UNCONFIRMED = (
    "We could not confirm your request was saved. Please wait a minute and send it again: "
    "if it did arrive, we will not record it twice."
)


@bp.route("/demo", methods=["GET", "POST"])
@public_form_limits("demo")
@public
def request_demo():
    form = DemoRequestForm()

    def submit():
        operations.request_demo(
            portal_context(),
            name=form.name.data,
            email=form.email.data,
            company=form.company.data,
            message=form.message.data,
        )

    if accept_public_form(form, submit, unconfirmed=UNCONFIRMED):
        return redirect(url_for(".thanks"))
    return render_template("demo/request.html", form=form), 200 if request.method == "GET" else 400


@bp.get("/demo/thanks")
@public
def thanks():
    return render_template("demo/thanks.html")
