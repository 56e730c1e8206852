"""The report's methodology and its map to the frameworks companies file against, in our own words.

Kept as data in one place: the page, the PDF and the exports read it, and a framework that
changes (ESRS is being simplified) is one edit here.

Every text is marked for the catalogue and translated where it is shown (`method`, `crosswalk`
take the reader's language). Frameworks keep the names they publish: GRI, IRIS+, B4SI and ESRS
codes as they are, the UN's goals under their official Norwegian name ("FNs bærekraftsmål").
"""

from __future__ import annotations

from decimal import Decimal

from portal.core.i18n import ENGLISH, N_, number, translate
from portal.reports.disclosure import DOMINANCE
from portal.reports.labels import describe_in

SDGS = {
    "language": N_("SDG 4 (quality education); SDG 10 (reduced inequalities, targets 10.2 and 10.7)"),
    "mentorship": N_(
        "SDG 5 (gender equality, target 5.5); SDG 8 (decent work and economic growth); SDG 10 (reduced inequalities)"
    ),
}

METHOD = (
    N_(
        "Hours are measured, not logged. Each hour in this report comes from a session record that the "
        "programme platform (TEEI Language or TEEI Mentorship) sent to the portal with a signature. A session "
        "counts only when the platform marks it attended; its length is the platform's. A cancellation or a "
        "no-show counts for nothing, and when the platform corrects a session the newer record replaces the "
        "older one. A session belongs to the company the volunteer worked for on the day it was held."
    ),
    N_(
        "A session is held in working time or in the volunteer's own time, as the programme platform reports "
        "it (working time when it does not say). Own-time hours count only for volunteers who chose, on their "
        "own page in the portal, to include them; a report once filed keeps its hours when a volunteer changes "
        "that choice later."
    ),
    N_(
        "Periods are whole local days in the stated time zone: a session at 23:30 on the last evening of a "
        "month belongs to that month."
    ),
    N_(
        "Participation rate = active volunteers (colleagues with at least one attended session in the period) "
        "divided by the colleagues with an employee account at the company at any time in the period."
    ),
    N_(
        "Figures for filing never describe fewer than 5 colleagues, nor mostly one of them. A figure about 1 to 4 "
        "colleagues is hidden, and so is an hours figure where one colleague gave %(share)s%% or more of the hours. So is "
        "any other figure that would let such a figure be worked out by adding or subtracting what is shown, in "
        "this PDF or in any other report the company has filed (other months, quarters and years, and the "
        "report emails), also by a colleague who adds what they know of their own hours. Filed reports cover "
        "whole months, quarters or years that have ended, and a report, once filed, is the same every time it is "
        "made again. Learners are never part of the data."
    ),
)


def method(language: str) -> list[str]:
    """The methodology's paragraphs in `language` (the dominance share filled in where it is named)."""
    return [translate(language, text, share=DOMINANCE) for text in METHOD]


def sdgs(programme: str, language: str) -> str:
    """The goals a programme contributes to, as the UN names them in `language`."""
    return translate(language, SDGS[programme])


# The frameworks by the names they publish; only what is ours is translated.
GRI_413_NAME, GRI_201_NAME, IRIS_NAME, ESRS_NAME = "GRI 413-1", "GRI 201-1", "IRIS+ OI8429", "ESRS S3-4 §32(c)"
VSME_NAME = "VSME B2/C2"
B4SI_NAME = N_("B4SI time")
SDG_NAME = N_("SDGs")

# What each framework asks for.
GRI_413 = N_("Operations with local community engagement and development programmes.")
GRI_201 = N_("Economic value distributed, including community investments.")
IRIS = N_("Community Service Hours Contributed, split by paid working time and own time.")
B4SI = N_("Cost to the company of hours volunteered in company time.")
ESRS = N_("Initiatives whose main purpose is a positive impact for affected communities.")
VSME = N_(
    "For a company reporting under EFRAG's voluntary SME standard: whether it has practices for affected "
    "communities (B2), and what they are (C2)."
)
SDG_ASK = N_("Goals the programmes contribute to (suggested).")
# What the filing PDF says in place of figures it hides (fewer than 5 volunteers in all).
TOO_FEW = N_("Not shown: the period's totals are hidden in this filing (see Methodology).")


def _whole(value: int, language: str) -> str:
    """A count as the crosswalk always wrote it in English (1234), and with a thousands space in Norwegian."""
    return str(value) if language == ENGLISH else number(value, language)


def _cost(cost: str, language: str) -> str:
    """The hourly cost as the company entered it (English), or written as the language writes amounts."""
    return cost if language == ENGLISH else number(Decimal(cost), language, 2)


def crosswalk(
    report, *, language: str = ENGLISH, hide_total: bool = False, hide_volunteers: bool = False
) -> list[tuple[str, str, str]]:
    """(framework, what it asks for, what this report gives), for the report's period and settings,
    in `language`.

    `hide_total`: the filing PDF hides the period's totals, and so every line here that would repeat
    them, or a share of them, says so instead. `hide_volunteers`: it hides only the count of
    volunteers. Money and shares are computed from the hours as printed."""

    hours = number(report.figures.total.hours, language, 2)
    paid = number(report.company_time_hours, language, 2)
    own = number(report.own_time_hours, language, 2)
    share = report.settings.company_time_percent
    currency = report.settings.currency
    if report.b4si_time_value is None:
        b4si = translate(
            language,
            "%(paid)s hours in company time. Enter an hourly cost (salary, overheads and pension) in the "
            "report settings to value them.",
            paid=paid,
        )
    else:
        b4si = translate(
            language,
            "%(paid)s hours in company time x %(cost)s %(currency)s = %(value)s %(currency)s (time input). "
            "Hours in the volunteers' own time are leverage, not a company input.",
            paid=paid,
            cost=_cost(report.settings.hourly_cost, language),
            currency=currency,
            value=number(report.b4si_time_value, language, 0),
        )
    programmes = ". ".join(f"{name}: {sdgs(p, language)}" for p, name in report.programme_labels.items())
    period = describe_in(report.query.period.start, report.query.period.end, language)
    count = None if hide_volunteers else report.figures.total.volunteers
    b4si_name, sdg_name = translate(language, B4SI_NAME), translate(language, SDG_NAME)
    b4si_asks, sdg_asks = translate(language, B4SI), translate(language, SDG_ASK)
    if hide_total:
        too_few = translate(language, TOO_FEW)
        return [
            (GRI_413_NAME, translate(language, GRI_413), too_few),
            (GRI_201_NAME, translate(language, GRI_201), too_few),
            (IRIS_NAME, translate(language, IRIS), too_few),
            (b4si_name, b4si_asks, too_few),
            (ESRS_NAME, translate(language, ESRS), too_few),
            (VSME_NAME, translate(language, VSME), too_few),
            (sdg_name, sdg_asks, programmes),
        ]
    if count is None:
        gri_413 = translate(
            language,
            "Employee volunteering in TEEI's programmes: %(hours)s verified hours from %(period)s.",
            hours=hours,
            period=period,
        )
        esrs = translate(
            language,
            'Text to copy: "Our employees volunteer in TEEI Language and TEEI Mentorship, free programmes of '
            "The Educational Equality Institute. From %(period)s, colleagues gave %(hours)s hours, measured from "
            'attended sessions recorded by the programmes." Use it where S3 is material; otherwise report it as '
            "entity-specific information.",
            period=period,
            hours=hours,
        )
    else:
        gri_413 = translate(
            language,
            "Employee volunteering in TEEI's programmes: %(count)s colleagues, %(hours)s verified hours from %(period)s.",
            count=_whole(count, language),
            hours=hours,
            period=period,
        )
        esrs = translate(
            language,
            'Text to copy: "Our employees volunteer in TEEI Language and TEEI Mentorship, free programmes of '
            "The Educational Equality Institute. From %(period)s, %(count)s colleagues gave %(hours)s hours, "
            'measured from attended sessions recorded by the programmes." Use it where S3 is material; '
            "otherwise report it as entity-specific information.",
            period=period,
            count=_whole(count, language),
            hours=hours,
        )
    return [
        (GRI_413_NAME, translate(language, GRI_413), gri_413),
        (
            GRI_201_NAME,
            translate(language, GRI_201),
            translate(
                language,
                "The B4SI time value below can be reported as the cost of employee time given to the community.",
            ),
        ),
        (
            IRIS_NAME,
            translate(language, IRIS),
            translate(
                language,
                "%(hours)s hours: %(paid)s in paid working time and %(own)s in own time. Assumption: %(share)s%% of "
                "hours are given in company time, as the company states in its settings.",
                hours=hours,
                paid=paid,
                own=own,
                share=share,
            ),
        ),
        (b4si_name, b4si_asks, b4si),
        (ESRS_NAME, translate(language, ESRS), esrs),
        (
            VSME_NAME,
            translate(language, VSME),
            translate(
                language,
                "Yes: employee volunteering in TEEI Language and TEEI Mentorship (B2); describe it with the "
                "ESRS text above and %(hours)s verified hours (C2).",
                hours=hours,
            ),
        ),
        (sdg_name, sdg_asks, programmes),
    ]


# The filing pack's data points (pack.py, issue 50 item 3): which of a filing's measures each
# framework's disclosure takes, by the names the crosswalk above gives them. The pack reads values
# and their masking from the filing; only this mapping lives here. B4SI's time is split into what
# its model calls inputs (the company's time and its cost) and outputs (people and activities).
B4SI_INPUTS, B4SI_OUTPUTS = "B4SI inputs", "B4SI outputs"
DATA_POINTS: dict[str, tuple[str, ...]] = {
    GRI_413_NAME: ("volunteers", "volunteer_hours", "participation_rate"),
    GRI_201_NAME: ("community_investment_time",),
    IRIS_NAME: ("volunteer_hours", "company_time_hours", "own_time_hours"),
    B4SI_INPUTS: ("company_time_hours", "community_investment_time"),
    B4SI_OUTPUTS: ("volunteers", "sessions"),
    ESRS_NAME: ("volunteers", "volunteer_hours"),
    VSME_NAME: ("volunteer_hours",),
}
