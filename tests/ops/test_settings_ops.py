"""The operations variables: bad values stop start-up with one line naming the variable."""

import pytest

from portal.core.settings import ConfigError, Settings


@pytest.mark.parametrize(
    "env, variable",
    [
        ({"LOG_FORMAT": "JSON"}, "LOG_FORMAT"),
        ({"LOG_FORMAT": "logfmt"}, "LOG_FORMAT"),
        ({"METRICS_TOKEN": "short"}, "METRICS_TOKEN"),
        ({"METRICS_TOKEN": "a token with spaces in it"}, "METRICS_TOKEN"),
        ({"TRUSTED_PROXY_COUNT": "one"}, "TRUSTED_PROXY_COUNT"),
        ({"TRUSTED_PROXY_COUNT": "-1"}, "TRUSTED_PROXY_COUNT"),
        ({"TRUSTED_PROXY_COUNT": "9"}, "TRUSTED_PROXY_COUNT"),
        ({"PROMETHEUS_MULTIPROC_DIR": "instance/metrics"}, "PROMETHEUS_MULTIPROC_DIR"),
    ],
)
def test_bad_values_name_their_variable(env, variable, tmp_path):
    with pytest.raises(ConfigError) as raised:
        Settings.from_env(env, instance_path=tmp_path)
    assert raised.value.variable == variable
    assert str(raised.value.code).startswith(f"configuration error: {variable} ")
    assert env[variable] not in str(raised.value.code) or variable != "METRICS_TOKEN"


def test_defaults_and_values(tmp_path):
    default = Settings.from_env({}, instance_path=tmp_path)
    assert (default.log_format, default.metrics_token, default.trusted_proxy_count) == ("text", None, 0)
    chosen = Settings.from_env(
        {"LOG_FORMAT": "json", "METRICS_TOKEN": "m" * 32, "TRUSTED_PROXY_COUNT": "2"}, instance_path=tmp_path
    )
    assert (chosen.log_format, chosen.metrics_token, chosen.trusted_proxy_count) == ("json", "m" * 32, 2)
    assert "metrics_token" not in chosen.as_public_dict()
