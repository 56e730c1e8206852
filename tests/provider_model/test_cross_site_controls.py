"""The provider model's controls refuse what a web page could send (issue 14, finding 8)."""

import requests


def test_a_form_post_from_a_web_page_cannot_reset_the_model(model, message):
    import resend

    resend.Emails.send(message())
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        response = requests.post(f"{model.url}/_model/reset", data="{}", headers={"Content-Type": content_type})
        assert response.status_code == 403
    assert len(model.sent()) == 1, "nothing was reset"


def test_json_from_another_origin_is_refused_and_scripts_are_served(model, message):
    import resend

    resend.Emails.send(message())
    other_site = requests.post(f"{model.url}/_model/reset", json={}, headers={"Origin": "https://evil.example"})
    assert other_site.status_code == 403 and len(model.sent()) == 1
    assert requests.post(f"{model.url}/_model/reset", json={}).json() == {"ok": True}
    assert model.sent() == []
