import subprocess
import sys

import pytest

from portal.core.settings import DEV_ATTENDANCE_WEBHOOK_SECRET, DEV_WEBHOOK_SECRET, ConfigError, Settings


def test_defaults_in_development(tmp_path):
    settings = Settings.from_env({}, instance_path=tmp_path)
    assert settings.portal_env == "development"
    assert settings.redis_url == "redis://127.0.0.1:6379/0"
    assert settings.outbox_max_attempts == 8
    # The development secret key is generated once and kept.
    assert Settings.from_env({}, instance_path=tmp_path).secret_key == settings.secret_key


# What production must name itself (no silent fallback to a development default).
PRODUCTION = {
    "PORTAL_ENV": "production",
    "DATABASE_URL": "sqlite+libsql:///srv/portal/portal.db",
    "PUBLIC_BASE_URL": "https://portal.teei.example",
    "EMAIL_FROM": "TEEI Partner Portal <portal@teei.example>",
    "CAMPAIGN_FROM": "TEEI News <news@news.teei.example>",
}


@pytest.mark.parametrize(
    "env, variable",
    [
        ({"PORTAL_ENV": "prod"}, "PORTAL_ENV"),
        ({**PRODUCTION, "RESEND_API_KEY": "re_x", "RESEND_WEBHOOK_SECRET": "whsec_abc"}, "SECRET_KEY"),
        ({**PRODUCTION, "SECRET_KEY": "k", "RESEND_API_KEY": "re_x"}, "RESEND_WEBHOOK_SECRET"),
        ({**PRODUCTION, "DATABASE_URL": ""}, "DATABASE_URL"),
        ({**PRODUCTION, "PUBLIC_BASE_URL": ""}, "PUBLIC_BASE_URL"),
        ({**PRODUCTION, "EMAIL_FROM": ""}, "EMAIL_FROM"),
        ({"RESEND_WEBHOOK_SECRET": "whsec_"}, "RESEND_WEBHOOK_SECRET"),
        ({"RESEND_WEBHOOK_SECRET": "whsec_!!!!"}, "RESEND_WEBHOOK_SECRET"),
        ({"RESEND_API_URL": "api.resend.com"}, "RESEND_API_URL"),
        ({"DATABASE_HISTORY_DAYS": "a week"}, "DATABASE_HISTORY_DAYS"),
        ({"DATABASE_HISTORY_DAYS": "0"}, "DATABASE_HISTORY_DAYS"),
        ({"EMAIL_FROM": "Partner Portal"}, "EMAIL_FROM"),
        ({**PRODUCTION, "CAMPAIGN_FROM": ""}, "CAMPAIGN_FROM"),
        ({"CAMPAIGN_FROM": "News"}, "CAMPAIGN_FROM"),
        ({"OUTBOX_CLAIM_SECONDS": "soon"}, "OUTBOX_CLAIM_SECONDS"),
        ({"OUTBOX_MAX_ATTEMPTS": "0"}, "OUTBOX_MAX_ATTEMPTS"),
        ({"DATABASE_URL": "postgresql://x"}, "DATABASE_URL"),
        ({"REDIS_URL": "http://x"}, "REDIS_URL"),
        ({"PUBLIC_BASE_URL": "portal.example"}, "PUBLIC_BASE_URL"),
        ({"ATTENDANCE_WEBHOOK_SECRET": "c2VjcmV0"}, "ATTENDANCE_WEBHOOK_SECRET"),
        ({"ATTENDANCE_WEBHOOK_SECRET": "whsec_"}, "ATTENDANCE_WEBHOOK_SECRET"),
        ({"PORTAL_TIMEZONE": "Mars/Olympus_Mons"}, "PORTAL_TIMEZONE"),
        ({"PORTAL_TIMEZONE": "../../etc/passwd"}, "PORTAL_TIMEZONE"),
    ],
)
def test_bad_configuration_names_the_variable(tmp_path, env, variable):
    with pytest.raises(ConfigError) as raised:
        Settings.from_env(env, instance_path=tmp_path)
    assert raised.value.variable == variable
    assert variable in str(raised.value.code)


def test_campaign_sender_is_its_own_but_defaults_to_email_from_in_development(tmp_path):
    assert (
        Settings.from_env({"EMAIL_FROM": "P <p@x.example>"}, instance_path=tmp_path).campaign_from == "P <p@x.example>"
    )
    both = {"EMAIL_FROM": "P <p@x.example>", "CAMPAIGN_FROM": "News <news@news.x.example>"}
    assert Settings.from_env(both, instance_path=tmp_path).campaign_from == "News <news@news.x.example>"


def test_production_refuses_the_development_webhook_secret(tmp_path):
    env = {
        **PRODUCTION,
        "SECRET_KEY": "k",
        "RESEND_API_KEY": "re_x",
        "RESEND_WEBHOOK_SECRET": DEV_WEBHOOK_SECRET,
    }
    with pytest.raises(ConfigError, match="RESEND_WEBHOOK_SECRET"):
        Settings.from_env(env, instance_path=tmp_path)


def test_production_refuses_the_development_attendance_secret_without_repeating_it(tmp_path):
    env = {
        **PRODUCTION,
        "SECRET_KEY": "k",
        "RESEND_API_KEY": "re_x",
        "RESEND_WEBHOOK_SECRET": "whsec_cHJvZA==",
    }
    with pytest.raises(ConfigError, match="ATTENDANCE_WEBHOOK_SECRET") as raised:
        Settings.from_env(env, instance_path=tmp_path)
    assert DEV_ATTENDANCE_WEBHOOK_SECRET not in str(raised.value.code)
    production = Settings.from_env(
        {**env, "ATTENDANCE_WEBHOOK_SECRET": "whsec_YXR0ZW5kYW5jZQ=="}, instance_path=tmp_path
    )
    assert production.attendance_webhook_secret == "whsec_YXR0ZW5kYW5jZQ=="
    assert "attendance_webhook_secret" not in production.as_public_dict()


def test_portal_timezone_defaults_to_oslo_and_takes_any_zone_name(tmp_path):
    assert Settings.from_env({}, instance_path=tmp_path).portal_timezone == "Europe/Oslo"
    assert (
        Settings.from_env({"PORTAL_TIMEZONE": "America/New_York"}, instance_path=tmp_path).portal_timezone
        == "America/New_York"
    )


def test_start_up_with_bad_configuration_prints_one_line(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "portal", "db", "upgrade"],
        env={**PRODUCTION, "PATH": "/usr/bin:/bin", "PORTAL_INSTANCE_PATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == ["configuration error: SECRET_KEY is required when PORTAL_ENV=production"]


STAGING = {**PRODUCTION, "PORTAL_ENV": "staging", "RESEND_API_KEY": "re_x", "SECRET_KEY": "k"}


@pytest.mark.parametrize(
    "env, variable",
    [
        ({**STAGING, "RESEND_WEBHOOK_SECRET": "whsec_YQ==", "SECRET_KEY": ""}, "SECRET_KEY"),
        ({**STAGING, "ATTENDANCE_WEBHOOK_SECRET": "whsec_YQ=="}, "RESEND_WEBHOOK_SECRET"),
        ({**STAGING, "RESEND_WEBHOOK_SECRET": "whsec_YQ=="}, "ATTENDANCE_WEBHOOK_SECRET"),
        ({**STAGING, "RESEND_WEBHOOK_SECRET": "whsec_YQ==", "RESEND_API_KEY": ""}, "RESEND_API_KEY"),
    ],
)
def test_staging_refuses_development_secrets_as_production_does(env, variable, tmp_path):
    with pytest.raises(ConfigError) as refused:
        Settings.from_env(env, instance_path=tmp_path)
    assert refused.value.variable == variable and "PORTAL_ENV=staging" in str(refused.value)


def test_staging_is_served_like_production_secure_cookies_and_hsts(tmp_path):
    from portal import create_app
    from portal.web.extensions import EXTENSION_KEY

    staging = Settings.from_env(
        {**STAGING, "RESEND_WEBHOOK_SECRET": "whsec_YQ==", "ATTENDANCE_WEBHOOK_SECRET": "whsec_Yg=="},
        instance_path=tmp_path,
    )
    app = create_app({"TESTING": True}, settings=staging)
    try:
        assert app.config["SESSION_COOKIE_SECURE"] and app.config["REMEMBER_COOKIE_SECURE"]
        assert "max-age=" in app.test_client().get("/login").headers["Strict-Transport-Security"]
        assert "max-age=" in app.test_client().post("/webhooks/resend").headers["Strict-Transport-Security"]
    finally:
        app.extensions[EXTENSION_KEY].db.dispose()


def test_no_receipt_hours_must_leave_the_lookups_time_before_the_provider_forgets(tmp_path):
    """Resend's free plan keeps an email's record 1 day: the lookups need 12 of its hours (two
    questions 6 hours apart), so no receipt after 12 hours is the latest they can ask about."""
    assert Settings.from_env({}, instance_path=tmp_path).outbox_no_receipt_hours == 12
    assert Settings.from_env({"OUTBOX_NO_RECEIPT_HOURS": "12"}, instance_path=tmp_path).outbox_no_receipt_hours == 12
    with pytest.raises(ConfigError) as raised:
        Settings.from_env({"OUTBOX_NO_RECEIPT_HOURS": "13"}, instance_path=tmp_path)
    assert raised.value.variable == "OUTBOX_NO_RECEIPT_HOURS"
    assert "PROVIDER_LOG_RETENTION_DAYS=1" in str(raised.value.code)
    # A plan that keeps records 3 days allows the old 48 hours, and up to 60.
    longer = {"PROVIDER_LOG_RETENTION_DAYS": "3", "OUTBOX_NO_RECEIPT_HOURS": "60"}
    assert Settings.from_env(longer, instance_path=tmp_path).outbox_no_receipt_hours == 60
    with pytest.raises(ConfigError) as raised:
        Settings.from_env({**longer, "OUTBOX_NO_RECEIPT_HOURS": "61"}, instance_path=tmp_path)
    assert raised.value.variable == "OUTBOX_NO_RECEIPT_HOURS"


@pytest.mark.parametrize("raw", ["0", "a day", "-1"])
def test_provider_log_retention_days_must_be_a_positive_whole_number(tmp_path, raw):
    with pytest.raises(ConfigError) as raised:
        Settings.from_env({"PROVIDER_LOG_RETENTION_DAYS": raw}, instance_path=tmp_path)
    assert raised.value.variable == "PROVIDER_LOG_RETENTION_DAYS"
