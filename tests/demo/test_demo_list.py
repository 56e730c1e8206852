def test_admins_see_demo_requests_newest_first_and_can_search(client, auth, make_user, ask):
    ask()
    ask(name="Kari Nordmann", email="kari@fjord.example", company="Fjord AS", message="Line one\nLine two")
    ask(message="A second request from the same person.")
    auth.login(make_user("admin"))
    page = client.get("/admin/demo-requests").get_data(as_text=True)
    assert "Showing all 3" in page
    assert page.index("A second request") < page.index("Kari Nordmann") < page.index("About 40 colleagues")
    assert "asked 2 times" in page
    found = client.get("/admin/demo-requests?q=fjord").get_data(as_text=True)
    assert "Showing all 1" in found and "Kari Nordmann" in found and "Sofia Reyes" not in found
    assert "Demo requests" in client.get("/admin/").get_data(as_text=True)
