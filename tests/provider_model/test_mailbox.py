"""The mail viewer remembers mail across restarts when given a mailbox file (issue 14, make run)."""

import resend

from devtools.provider_model import ProviderModel


def test_mail_sent_before_a_restart_is_still_in_the_viewer(tmp_path, message):
    mailbox = tmp_path / "instance" / "mailbox.json"
    first = ProviderModel(port=0, mailbox_path=mailbox).start()
    saved = resend.api_key, resend.api_url
    resend.api_key, resend.api_url = "re_test", first.url
    try:
        resend.Emails.send(message(subject="Your invitation link"))
    finally:
        resend.api_key, resend.api_url = saved
        first.stop()

    second = ProviderModel(port=0, mailbox_path=mailbox).start()
    try:
        assert [email["subject"] for email in second.sent()] == ["Your invitation link"]
        import requests

        assert "Your invitation link" in requests.get(f"{second.url}/").text
    finally:
        second.stop()
    assert mailbox.stat().st_mode & 0o077 == 0, "the mailbox holds addresses and live links"
