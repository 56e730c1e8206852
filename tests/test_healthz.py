from portal import create_app


def test_healthy_when_database_and_redis_answer(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json == {"status": "ok", "checks": {"database": "ok", "redis": "ok"}}


def test_503_names_redis_when_it_is_down(settings):
    from devtools.processes import free_port

    app = create_app(
        {"TESTING": True}, settings=settings.with_overrides(redis_url=f"redis://127.0.0.1:{free_port()}/0")
    )
    response = app.test_client().get("/healthz")
    assert response.status_code == 503
    assert response.json["failing"] == ["redis"]
    assert response.json["checks"]["database"] == "ok"


def test_503_names_the_database_when_it_is_unreadable(settings, tmp_path):
    app = create_app(
        {"TESTING": True},
        settings=settings.with_overrides(database_url=f"sqlite+libsql:///{tmp_path}/missing-dir/x/portal.db"),
    )
    response = app.test_client().get("/healthz")
    assert response.status_code == 503
    assert response.json["failing"] == ["database"]
