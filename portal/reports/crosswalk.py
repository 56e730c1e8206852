"""The report's methodology and its map to the frameworks companies file against, in our own words.

Kept as data in one place: the page, the PDF and the exports read it, and a framework that
changes (ESRS is being simplified) is one edit here.
"""

from __future__ import annotations

from portal.core.periods import describe

SDGS = {
    "language": "SDG 4 (quality education); SDG 10 (reduced inequalities, targets 10.2 and 10.7)",
    "mentorship": "SDG 5 (gender equality, target 5.5); SDG 8 (decent work and economic growth); "
    "SDG 10 (reduced inequalities)",
}

METHOD = (
    "Hours are measured, not logged. Each hour in this report comes from a session record that the "
    "programme platform (TEEI Language or TEEI Mentorship) sent to the portal with a signature. A session "
    "counts only when the platform marks it attended; its length is the platform's. A cancellation or a "
    "no-show counts for nothing, and when the platform corrects a session the newer record replaces the "
    "older one. A session belongs to the company the volunteer worked for on the day it was held.",
    "Periods are whole local days in the stated time zone: a session at 23:30 on the last evening of a "
    "month belongs to that month.",
    "Participation rate = active volunteers (colleagues with at least one attended session in the period) "
    "divided by the colleagues with an employee account at the company at any time in the period.",
    "Figures for filing never describe fewer than 5 colleagues. A figure about 1 to 4 colleagues is hidden, "
    "and so is any other figure that would let it be worked out by adding or subtracting what is shown, in "
    "this PDF or in any other report the company has filed (other months, quarters and years, and the "
    "report emails). Filed reports cover whole months, quarters or years that have ended, and a report, "
    "once filed, is the same every time it is made again. Learners are never part of the data.",
)


# What each framework asks for.
GRI_413 = "Operations with local community engagement and development programmes."
GRI_201 = "Economic value distributed, including community investments."
IRIS = "Community Service Hours Contributed, split by paid working time and own time."
B4SI = "Cost to the company of hours volunteered in company time."
ESRS = "Initiatives whose main purpose is a positive impact for affected communities."
SDG_ASK = "Goals the programmes contribute to (suggested)."
# What the filing PDF says in place of figures it hides (fewer than 5 volunteers in all).
TOO_FEW = "Not shown: the period's totals are hidden in this filing (see Methodology)."


def crosswalk(report, *, hide_total: bool = False, hide_volunteers: bool = False) -> list[tuple[str, str, str]]:
    """(framework, what it asks for, what this report gives), for the report's period and settings.

    `hide_total`: the filing PDF hides the period's totals, and so every line here that would repeat
    them, or a share of them, says so instead. `hide_volunteers`: it hides only the count of
    volunteers. Money and shares are computed from the hours as printed."""
    hours = f"{report.figures.total.hours:,.2f}"
    paid = f"{report.company_time_hours:,.2f}"
    own = f"{report.own_time_hours:,.2f}"
    share = report.settings.company_time_percent
    if report.b4si_time_value is None:
        b4si = (
            f"{paid} hours in company time. Enter an hourly cost (salary, overheads and pension) in the "
            "report settings to value them."
        )
    else:
        b4si = (
            f"{paid} hours in company time x {report.settings.hourly_cost} {report.settings.currency} "
            f"= {report.b4si_time_value:,} {report.settings.currency} (time input). Hours in the "
            "volunteers' own time are leverage, not a company input."
        )
    programmes = ". ".join(f"{name}: {SDGS[p]}" for p, name in report.programme_labels.items())
    period = describe(report.query.period.start, report.query.period.end)
    count = None if hide_volunteers else report.figures.total.volunteers
    if hide_total:
        return [
            ("GRI 413-1", GRI_413, TOO_FEW),
            ("GRI 201-1", GRI_201, TOO_FEW),
            ("IRIS+ OI8429", IRIS, TOO_FEW),
            ("B4SI time", B4SI, TOO_FEW),
            ("ESRS S3-4 §32(c)", ESRS, TOO_FEW),
            ("SDGs", SDG_ASK, programmes),
        ]
    return [
        (
            "GRI 413-1",
            GRI_413,
            f"Employee volunteering in TEEI's programmes: {'' if count is None else f'{count} colleagues, '}"
            f"{hours} verified hours from {period}.",
        ),
        (
            "GRI 201-1",
            GRI_201,
            "The B4SI time value below can be reported as the cost of employee time given to the community.",
        ),
        (
            "IRIS+ OI8429",
            IRIS,
            f"{hours} hours: {paid} in paid working time and {own} in own time. Assumption: {share}% of "
            "hours are given in company time, as the company states in its settings.",
        ),
        ("B4SI time", B4SI, b4si),
        (
            "ESRS S3-4 §32(c)",
            ESRS,
            f'Text to copy: "Our employees volunteer in TEEI Language and TEEI Mentorship, free programmes of '
            f"The Educational Equality Institute. From {period}, {'colleagues' if count is None else f'{count} colleagues'} gave {hours} hours, "
            "measured from "
            'attended sessions recorded by the programmes." '
            "Use it where S3 is material; otherwise report it as entity-specific information.",
        ),
        ("SDGs", SDG_ASK, programmes),
    ]
