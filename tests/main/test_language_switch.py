"""The language switch sends a person back to the page they were on, and never anywhere else."""

import pytest

from tests.pages import csrf_from

# Browsers read "\" as "/" and drop tabs and newlines from a URL: each of these leaves the portal.
ELSEWHERE = [
    "//evil.example",
    "/\t/evil.example",
    "/\n/evil.example",
    "/\r\n/evil.example",
    "/\\evil.example",
    "\\\\evil.example",
    "/\t\\evil.example",
    "/\x0b/evil.example",  # other control characters: not in a Location header either
    "/reports\x00",
    "https://evil.example/",
    "javascript:alert(1)",
    " //evil.example",
    "evil.example",
]


@pytest.mark.parametrize("next_value", ELSEWHERE)
def test_the_switch_answers_a_next_elsewhere_with_the_home_page(client, next_value):
    token = csrf_from(client.get("/demo").get_data(as_text=True))
    answer = client.post("/language", data={"language": "nb", "next": next_value, "csrf_token": token})
    assert answer.status_code == 302, "a next it refuses is no error: the person lands on the home page"
    assert answer.headers["Location"] == "/"
    assert client.get_cookie("language").value == "nb", "the choice is kept all the same"


def test_the_switch_keeps_a_path_of_the_portal_with_its_query(client):
    token = csrf_from(client.get("/demo").get_data(as_text=True))
    answer = client.post(
        "/language", data={"language": "nb", "next": "/admin/outbox?q=ørsted&status=sent", "csrf_token": token}
    )
    assert answer.status_code == 302 and answer.headers["Location"].startswith("/admin/outbox?q=")
    assert "status=sent" in answer.headers["Location"]
