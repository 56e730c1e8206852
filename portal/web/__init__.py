"""The web floor: what every area's pages share (extensions, access rules, the base form, public-form
helpers, paging, sessions, the lean app, template filters, the access log and observability)."""
