"""The access log's redaction (issue 14, finding 3); e2e/test_no_secrets_in_logs.py reads a real log."""

import sys

from portal.core.redaction import redact


def test_link_tokens_and_addresses_are_masked():
    line = (
        "GET /invitations/accept/AbC-123_x?utm=1 HTTP/1.1 "
        "/admin/suppressions/?q=ada%40example.com /unsubscribe/tok.en grace@navy.example"
    )
    assert redact(line) == (
        "GET /invitations/accept/[token]?utm=1 HTTP/1.1 /admin/suppressions/?q=[address] /unsubscribe/[token] [address]"
    )


def test_a_providers_code_and_state_on_the_sign_in_callback_are_masked():
    line = "GET /login/sso/callback?code=SplxlOBeZQQYbYS6WxSbIA&state=af0ifjsldkj HTTP/1.1"
    assert redact(line) == "GET /login/sso/callback?code=[token]&state=[token] HTTP/1.1"


def test_ordinary_paths_are_kept():
    assert redact("POST /invitations/accept HTTP/1.1") == "POST /invitations/accept HTTP/1.1"
    assert redact("GET /reports?from=2026-01-01&to=2026-03-31 HTTP/1.1").endswith("to=2026-03-31 HTTP/1.1")


def test_an_unhandled_error_on_a_link_logs_the_path_without_its_token(app, capsys):
    """Flask logs an unhandled error as "Exception on <path>": an invitation's path is its token."""
    try:
        raise RuntimeError("the database went away")
    except RuntimeError:
        with app.test_request_context("/invitations/accept/SeCrEtToKeN123"):
            app.log_exception(sys.exc_info())
    logged = capsys.readouterr().err
    assert "Exception on /invitations/accept/[token] [GET]" in logged
    assert "SeCrEtToKeN123" not in logged and "the database went away" in logged
