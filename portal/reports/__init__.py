"""Reports: a company's verified volunteering hours as a page, exports, a filing PDF and closed years.

The blueprint lives in routes.py (`portal.reports.routes.bp`); nothing is imported here.
"""
