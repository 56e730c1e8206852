"""Reports: a company's verified volunteering hours as a page, exports, a filing PDF and closed years.

Other areas use this one only through the names below (its face; tests/test_floors.py): the report
emails build a report from its figures and attach its filing PDF.
"""

from portal.reports.figures import OWN_TIME_COUNTED, Cell, Figures, counted_time_text, read_figures
from portal.reports.filing import Filed, FiledCorrections, FilingMask, choose_mask, file_on, verify_url
from portal.reports.goals import Comparison, before_lines, before_note, goal_lines
from portal.reports.hours import hours_change, hours_text
from portal.reports.labels import closes_text, name_label, period_label
from portal.reports.queries import Closure, ReportSettings, read_closures, read_corrections_since, read_report_settings
from portal.reports.report import Changes, Report, live_report_id
from portal.reports.selection import ReportQuery


def filing_pdf(report: Report, language: str = "en", verify_url: str | None = None) -> bytes:
    """The filing PDF of a report, in `language` (its reader's), with the link (and QR code) that
    verifies it. Its library loads at the first PDF, not with this face: every worker imports the
    face at start, and the PDF library is a third of that start."""
    from portal.reports.pdf import filing_pdf as render

    return render(report, language, verify_url)


__all__ = [
    "OWN_TIME_COUNTED",
    "Cell",
    "Changes",
    "Closure",
    "Comparison",
    "Figures",
    "Filed",
    "FiledCorrections",
    "FilingMask",
    "Report",
    "ReportQuery",
    "ReportSettings",
    "before_lines",
    "before_note",
    "choose_mask",
    "closes_text",
    "counted_time_text",
    "file_on",
    "filing_pdf",
    "goal_lines",
    "hours_change",
    "hours_text",
    "live_report_id",
    "name_label",
    "period_label",
    "read_closures",
    "read_corrections_since",
    "read_figures",
    "read_report_settings",
    "verify_url",
]
