"""Gunicorn's configuration for the portal, the same under `make run`, the tests and production:

    gunicorn -c gunicorn.conf.py 'portal:create_app()'

Command-line options, and gunicorn's own GUNICORN_CMD_ARGS and WEB_CONCURRENCY, win over this
file (make run and the tests pass --bind). The portal's settings come from the environment as
everywhere (README: Configuration; docs/deploy.md).

Metrics: with PROMETHEUS_MULTIPROC_DIR set (a directory this user can write, emptied before the
first process of the machine starts: see docs/deploy.md), each worker writes its metrics there and
/metrics adds up every gunicorn and RQ worker on the machine; a worker that exits is marked dead
(child_exit), so per-process gauges stop counting it.
"""

import os

from portal.core.settings import Settings

# Checked here, in the master, so a bad value stops start-up with one line before any worker forks.
_settings = Settings.from_env()

wsgi_app = "portal:create_app()"
bind = "127.0.0.1:5000"
# Threaded workers. A sync worker serves one connection at a time and waits on it until it sends a
# request: a browser's speculative connection (Chromium opens one before the user clicks) held a
# sync worker for its whole 30 s timeout, and with two of them the portal stopped answering. A
# gthread worker waits for a request's first bytes off its thread pool. The portal's database
# helper and its Redis pool are shared by threads (the tests' server is threaded too).
workers = int(os.environ.get("WEB_CONCURRENCY") or 2)
worker_class = "gthread"
threads = 4
timeout = 30
graceful_timeout = 20
# Behind a proxy the connection to us is kept open by the proxy, not the browser.
keepalive = 5 if _settings.trusted_proxy_count else 2
# Gunicorn's own X-Forwarded-* handling is off (it trusts 127.0.0.1 and any Unix-socket peer by
# default): the app's ProxyFix (TRUSTED_PROXY_COUNT) decides whom to believe, in one place. A scheme
# taken from X-Forwarded-Proto would make every request "secure", and Flask-WTF would then refuse
# every form POST for want of a Referer, which the portal's Referrer-Policy never lets browsers send.
forwarded_allow_ips = ""
secure_scheme_headers = {}
accesslog = "-"
errorlog = "-"
# Tokens and addresses masked; JSON lines with LOG_FORMAT=json (portal/web/gunicorn_logging.py).
logger_class = "portal.web.gunicorn_logging.PortalLogger"
# The control socket (gunicorn 24+) has one default path per user: two masters on one host, as in
# the tests, would fight over it, and nothing here uses it.
control_socket_disable = True
# Workers do not share the app from the master: each builds its own database engine and Redis pool.
preload_app = False


def on_starting(server):
    multiproc_dir = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if multiproc_dir:
        os.makedirs(multiproc_dir, mode=0o700, exist_ok=True)
        server.log.info("metrics of every process are kept in %s", multiproc_dir)


def child_exit(server, worker):
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
