"""The web server's access log without secrets: gunicorn's logger, with tokens and addresses masked.

Links in emails carry tokens in their path (an invitation, an unsubscribe, a password reset), and
the first request for such a link is written to the access log before the portal can exchange the
token for session state. So every value the access log can show (request line, path, query,
Referer, any header) has those tokens, and any email address, replaced. Used by `make run`, the
browser tests and production alike, through gunicorn.conf.py's logger class
(`portal.web.gunicorn_logging.PortalLogger`, built on this one).
"""

from __future__ import annotations

from gunicorn.glogging import Logger

from portal.core.redaction import redact


class RedactingLogger(Logger):
    def atoms(self, resp, req, environ, request_time):
        atoms = super().atoms(resp, req, environ, request_time)
        return {name: redact(value) if isinstance(value, str) else value for name, value in atoms.items()}
