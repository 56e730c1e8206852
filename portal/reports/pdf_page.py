"""The page the portal's PDFs are drawn on (fpdf2, pure Python): fonts, colours, headings,
paragraphs, tables and bar charts, in the portal's look. pdf.py draws the documents on it, in one
language: the page's own words (the footer's page number, a hidden bar) are in it too."""

from __future__ import annotations

import io
import threading
from decimal import Decimal
from functools import lru_cache
from pathlib import Path

import segno
from fpdf import FPDF
from fpdf.enums import MethodReturnValue, XPos, YPos

from portal.core.i18n import ENGLISH, N_, number, translate

# What a bar chart (and a table) prints for a figure that is not shown; translated where printed.
HIDDEN = N_("hidden")
FONT_DIR = Path("/usr/share/fonts/truetype/liberation")  # Debian's fonts-liberation, which `make test` installs
INK, MUTED, BRAND, BRAND_ALT, LINE = (29, 36, 51), (91, 100, 117), (11, 92, 173), (120, 170, 220), (217, 222, 232)
NEXT = {"new_x": XPos.LMARGIN, "new_y": YPos.NEXT}
PARA_LINE = 4.8  # a paragraph's line height, mm


class ReportPDF(FPDF):
    def __init__(self, footer_text: str, language: str = ENGLISH):
        super().__init__(format="A4")
        self.footer_text = footer_text
        self.language = language
        self.set_margins(18, 16, 18)
        self.set_auto_page_break(True, margin=18)
        regular, bold = FONT_DIR / "LiberationSans-Regular.ttf", FONT_DIR / "LiberationSans-Bold.ttf"
        if regular.exists() and bold.exists():
            self.add_font("body", "", str(regular))
            self.add_font("body", "B", str(bold))
            self.unicode = True
        else:  # the core font: Latin-1 only, so text is folded to it in `t`
            self.unicode = False
        self.family = "body" if self.unicode else "helvetica"
        for font in self.fonts.values():
            # Writing the font subset, fontTools would recompute every glyph's box (its default): about
            # 12 ms a report PDF. The glyphs are copied as they are, with the boxes the font file gives
            # them; only the subset's overall box (`head`) stays the whole font's, larger and still true.
            font.ttfont.recalcBBoxes = False

    def t(self, text) -> str:
        text = str(text)
        if self.unicode:
            return text
        return (
            text.replace("–", "-")
            .replace("−", "-")
            .replace("—", "-")
            .replace("“", '"')
            .replace("”", '"')
            .replace("’", "'")
            .replace("·", "-")
            .encode("latin-1", "replace")
            .decode("latin-1")
        )

    def font(self, size: float, bold: bool = False, colour=INK):
        self.set_font(self.family, "B" if bold else "", size)
        self.set_text_color(*colour)

    def footer(self):
        self.set_y(-12)
        self.font(7.5, colour=MUTED)
        # "{nb}" is fpdf's stand-in for the number of pages, filled in when the document is output.
        footer = translate(
            self.language,
            "%(footer)s · page %(page)s/%(pages)s",
            footer=self.footer_text,
            page=self.page_no(),
            pages="{nb}",
        )
        self.cell(0, 5, self.t(footer), align="C")

    def heading(self, text: str, size: float = 13):
        if self.get_y() > self.h - 50:
            self.add_page()
        self.ln(3)
        self.font(size, bold=True)
        self.cell(0, 8, self.t(text), **NEXT)

    def para(self, text: str, size: float = 9.5, colour=INK):
        """A paragraph across the page, broken into lines where fpdf's multi_cell breaks it; the
        lines of a text met before are taken from `wrapped` (the methodology is in every report)."""
        self.font(size, colour=colour)
        lines = wrapped(self.t(text), size, self.w - self.r_margin - self.x)
        for index, line in enumerate(lines, 1):
            # Each line where multi_cell puts it: under the first, then back to the margin after the last.
            self.cell(
                0,
                PARA_LINE,
                line,
                align="L",
                new_x=XPos.LMARGIN if index == len(lines) else XPos.LEFT,
                new_y=YPos.NEXT,
            )
        if text.endswith("\n"):  # multi_cell's step down after a text that ends with a line break
            self.ln()
        self.ln(1.2)

    def grid(self, header: list[str], rows: list[list[str]], widths: list[float], *, bold_last: bool = False):
        """A table; `bold_last`: its last row is a total."""
        self.font(8.5, bold=True, colour=MUTED)
        self.set_draw_color(*LINE)
        for text, width in zip(header, widths, strict=True):
            self.cell(width, 6.5, self.t(text), border="B", align="L" if width == widths[0] else "R")
        self.ln()
        self.font(9)
        for row in rows:
            if self.get_y() > self.h - 24:
                self.add_page()
            for index, (text, width) in enumerate(zip(row, widths, strict=True)):
                self.set_font(self.family, "B" if row is rows[-1] and bold_last else "", 9)
                self.cell(width, 6, self.t(text), border="B", align="L" if index == 0 else "R")
            self.ln()
        self.ln(2)

    def bars(self, chart, hidden: list[bool] | None = None):
        """A horizontal bar chart drawn like the page's SVG: each bar labelled with its value."""
        label_w, value_w, row = 26, 40, 6.2
        track = self.w - self.l_margin - self.r_margin - label_w - value_w
        self.font(8.5, bold=True)
        self.cell(0, 6, self.t(chart.title), **NEXT)
        for index, bar in enumerate(chart.bars):
            if self.get_y() > self.h - 24:
                self.add_page()
            y, x = self.get_y(), self.l_margin
            is_hidden = bool(hidden and hidden[index])
            self.font(8.5, colour=MUTED)
            self.set_xy(x, y)
            self.cell(label_w - 2, row, self.t(bar.label), align="R")
            length = 0 if is_hidden else max(track * bar.fraction, 0.6 if bar.value else 0)
            if length:
                self.set_fill_color(*(BRAND_ALT if bar.pattern else BRAND))
                self.rect(x + label_w, y + 1, length, row - 2, style="F")
                if bar.pattern:  # hatching, so the programmes differ by more than colour
                    self.set_draw_color(255, 255, 255)
                    step = 1.6
                    pos = x + label_w
                    while pos < x + label_w + length:
                        self.line(pos, y + row - 1, min(pos + row - 2, x + label_w + length), y + 1)
                        pos += step
            self.font(8.5)
            self.set_xy(x + label_w + length + 1.5, y)
            self.cell(value_w, row, self.t(translate(self.language, HIDDEN) if is_hidden else bar.text))
            self.set_y(y + row)
        self.ln(3)


@lru_cache(maxsize=1024)
def wrapped(text: str, size: float, width: float) -> tuple[str, ...]:
    """`text`'s lines in the body font at `size` in a `width` mm column: fpdf's own line breaks, from
    a dry run on a page of this process's. fpdf measures the whole line again at each character it
    adds, so breaking the methodology's paragraphs was half of a report PDF's time; they are the same
    words in every report of a language, so they are broken once per process. A paragraph met once
    (a report ID in it) costs what it did; the least recently used lines are let go first."""
    with _MEASURING:
        page = _measuring_page()
        page.font(size)
        return tuple(page.multi_cell(width, PARA_LINE, text, align="L", dry_run=True, output=MethodReturnValue.LINES))


_MEASURING = threading.Lock()  # the measuring page has one current font: one thread at a time


@lru_cache(maxsize=1)
def _measuring_page() -> ReportPDF:
    page = ReportPDF("")
    page.add_page()
    return page


def qr_png(url: str) -> io.BytesIO:
    """The link as a QR code (segno, pure Python), a PNG with the quiet zone the standard asks for."""
    out = io.BytesIO()
    segno.make_qr(url, error="m").save(out, kind="png", scale=8, border=4)
    out.seek(0)
    return out


def fmt_hours(value: Decimal, language: str = ENGLISH) -> str:
    return number(value, language, 2)
