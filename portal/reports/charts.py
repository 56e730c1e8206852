"""Charts as data, drawn as server-rendered SVG (the page) or with PDF primitives (pdf.py).

Both charts are horizontal bars, one labelled row per month or programme: the labels never
collide at 390 px, and every bar carries its value in text, so colour is never the only cue.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from html import escape

from portal.core.i18n import ENGLISH, number, percent, translate, translate_plural
from portal.core.programmes import PROGRAMMES
from portal.reports.figures import Figures
from portal.reports.labels import month_row_label

WIDTH = 340  # viewBox units: about 1:1 on a phone, at most 420 px wide on a wide screen
ROW = 26
LABEL_W = 88
VALUE_W = 116  # room for the longest value text: "21,00 t · 62 %" in Norwegian


@dataclass(frozen=True)
class Bar:
    label: str
    value: Decimal
    text: str  # the value as words, drawn beside the bar
    fraction: float  # of the longest bar
    pattern: bool = False


@dataclass(frozen=True)
class Chart:
    id: str
    title: str
    description: str
    bars: list[Bar]


def _hours(value: Decimal, language: str) -> str:
    return translate(language, "%(hours)s h", hours=number(value, language, 2))


def month_chart(figures: Figures, hidden: list[bool] | None = None, language: str = ENGLISH) -> Chart:
    """Hours by listed month, in `language`. `hidden` (a filing PDF's mask): those bars carry no
    length, and the others are scaled by the longest shown bar, so no length gives a hidden month away."""
    months = figures.listed_months
    hidden = hidden or [False] * len(months)
    shown = [m for m, h in zip(months, hidden, strict=True) if not h]
    peak = max((m.total.minutes for m in shown), default=0) or 1
    bars = [
        Bar(
            month_row_label(m, language),
            m.total.hours,
            _hours(m.total.hours, language),
            0.0 if h else m.total.minutes / peak,
        )
        for m, h in zip(months, hidden, strict=True)
    ]
    busiest = max(shown, key=lambda m: m.total.minutes, default=None)
    if busiest and busiest.total.minutes:
        summary = translate_plural(
            language,
            "%(num)d month; most hours in %(month)s (%(hours)s); %(total)s in total.",
            "%(num)d months; most hours in %(month)s (%(hours)s); %(total)s in total.",
            len(bars),
            month=month_row_label(busiest, language),
            hours=_hours(busiest.total.hours, language),
            total=_hours(figures.total.hours, language),
        )
    else:
        summary = translate_plural(
            language,
            "%(num)d month; no verified hours in the period.",
            "%(num)d months; no verified hours in the period.",
            len(bars),
        )
    return Chart("chart-months", translate(language, "Verified hours by month"), summary, bars)


def programme_chart(
    figures: Figures, hidden: list[bool] | None = None, total_shown: bool = True, language: str = ENGLISH
) -> Chart:
    """Hours by programme, scaled by the longest shown bar, each with its share of the total where
    the total is shown (a filing PDF's mask can hide both), in `language`."""
    cells = list(figures.programmes.items())
    hidden = hidden or [False] * len(cells)
    total = figures.total.minutes or 1
    peak = max((c.minutes for (_, c), h in zip(cells, hidden, strict=True) if not h), default=0) or 1
    bars = []
    for index, ((programme, cell), is_hidden) in enumerate(zip(cells, hidden, strict=True)):
        text = _hours(cell.hours, language)
        if total_shown and figures.total.minutes:
            text += f" · {percent(round(100 * cell.minutes / total), language, 0)}"
        bars.append(
            Bar(
                PROGRAMMES[programme].replace("TEEI ", ""),
                cell.hours,
                text,
                0.0 if is_hidden else cell.minutes / peak,
                pattern=index == 1,
            )
        )
    parts = "; ".join(f"{b.label} {b.text}" for b, h in zip(bars, hidden, strict=True) if not h)
    return Chart(
        "chart-programmes",
        translate(language, "Verified hours by programme"),
        parts or translate(language, "No programmes."),
        bars,
    )


def svg(chart: Chart) -> str:
    """The chart as an accessible SVG: <title>, <desc>, role="img"; the table after it is the data."""
    height = ROW * max(len(chart.bars), 1) + 8
    track = WIDTH - LABEL_W - VALUE_W
    out = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-labelledby="{chart.id}-title {chart.id}-desc" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{chart.id}-title">{escape(chart.title)}</title>',
        f'<desc id="{chart.id}-desc">{escape(chart.description)}</desc>',
        f'<defs><pattern id="{chart.id}-hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="6" height="6" class="bar-alt"/>'
        '<line x1="0" y1="0" x2="0" y2="6" class="hatch-line"/></pattern></defs>',
    ]
    for index, bar in enumerate(chart.bars):
        y = 4 + index * ROW
        length = max(track * bar.fraction, 2 if bar.value else 0)
        # Inline style, so the stylesheet's bar colour cannot override the hatching.
        fill = f' style="fill: url(#{chart.id}-hatch)"' if bar.pattern else ""
        out.append(
            f'<text x="{LABEL_W - 8}" y="{y + 16}" text-anchor="end" class="chart-label">{escape(bar.label)}</text>'
        )
        out.append(
            f'<rect x="{LABEL_W}" y="{y + 3}" width="{length:.1f}" height="{ROW - 8}" rx="2" class="bar"{fill}/>'
        )
        out.append(f'<text x="{LABEL_W + length + 6:.1f}" y="{y + 16}" class="chart-value">{escape(bar.text)}</text>')
    out.append("</svg>")
    return "\n".join(out)
