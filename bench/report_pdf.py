"""Benchmark: the CPU time of one report email's filing PDF, drawn as before issue 49.6 and as now.

Seeds --companies (20, and 2 more that warm the cache) as bench/report_run.py does (--volunteers
with sessions each, each company's sessions of their own length), runs one pass of the report
schedule and takes its emails' stored inputs, every other one in Norwegian: what a worker renders.
Then, in alternating rounds so that load on the machine falls on both alike, renders each input's
filing PDF (`reports.filing_pdf`, the email's attachment):
- before: the page as it was: every paragraph broken on the spot by fpdf's multi_cell (which
  measures the line again at each character), and fontTools recomputing each glyph's box when the
  font subset is written;
- now: the paragraphs' lines from `pdf_page.wrapped`, warm as in a worker that has sent a report
  in each language (the 2 more companies', before each round), each measured report's own lines
  met for the first time, and the boxes kept as the font file gives them;
- first: now, with the cache emptied before each PDF (a worker's first report of a language).
Every PDF of a round must extract to the same text as before (pypdf). Prints the median CPU
milliseconds per PDF of each, the rest of the email (REPORT.render without its attachment: body
templates and subject) for comparison, and last the ratio now/before.
Run: .venv/bin/python bench/report_pdf.py [--companies 20] [--rounds 5]
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import sqlalchemy as sa
from pypdf import PdfReader

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.report_run import ROUNDS, seed  # noqa: E402
from devtools.testing import PrivateRedis  # noqa: E402
from portal.context import build_context  # noqa: E402
from portal.core import clock, schema  # noqa: E402
from portal.core.settings import Settings  # noqa: E402
from portal.report_emails.content import report_from_input  # noqa: E402
from portal.report_emails.emails import REPORT  # noqa: E402
from portal.report_emails.operations import run_due  # noqa: E402
from portal.reports import filing_pdf, pdf_page  # noqa: E402


def multi_cell_para(self, text, size=9.5, colour=pdf_page.INK):
    """ReportPDF.para before the cache: one multi_cell, broken on the spot."""
    self.font(size, colour=colour)
    self.multi_cell(0, 4.8, self.t(text), align="L", **pdf_page.NEXT)
    self.ln(1.2)


@contextmanager
def page_as_before():
    """The page as it drew before: multi_cell paragraphs, every glyph box recomputed at output."""
    para, init = pdf_page.ReportPDF.para, pdf_page.ReportPDF.__init__

    def recomputing_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        for font in self.fonts.values():
            font.ttfont.recalcBBoxes = True  # fontTools' default

    pdf_page.ReportPDF.para, pdf_page.ReportPDF.__init__ = multi_cell_para, recomputing_init
    try:
        yield
    finally:
        pdf_page.ReportPDF.para, pdf_page.ReportPDF.__init__ = para, init


def report_inputs(companies: int, volunteers: int) -> list[dict]:
    """One scheduled pass's stored report email inputs, every other one in Norwegian."""
    workdir = Path(tempfile.mkdtemp(prefix="bench-report-pdf-"))
    redis_server = PrivateRedis().start()
    settings = Settings.from_env(
        {"DATABASE_URL": f"sqlite+libsql:///{workdir / 'portal.db'}", "REDIS_URL": redis_server.url, "SECRET_KEY": "b"},
        instance_path=workdir / "instance",
    )
    ctx = build_context(settings)
    try:
        schema.upgrade(ctx.db)
        seed(ctx.db, companies, volunteers)
        with ctx.db.write() as conn:  # each company its own hours, so its crosswalk lines are its own
            conn.execute(sa.text("UPDATE attendance_sessions SET minutes = 30 + 5 * (company_id % 13) + user_id % 4"))
        run_due(ctx, now=ROUNDS[0])
        with ctx.db.read() as conn:
            stored = conn.execute(
                sa.text("SELECT template_input FROM email_outbox WHERE family = 'report' AND recipient LIKE 'm0@%'")
            ).scalars()
            inputs = [json.loads(text) for text in stored]
    finally:
        ctx.db.dispose()
        redis_server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return [{**data, "language": "nb" if n % 2 else "en"} for n, data in enumerate(inputs)]


def text_of(pdf: bytes) -> str:
    return "\f".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)


def cpu_ms(work) -> tuple[float, object]:
    started = time.process_time()
    result = work()
    return (time.process_time() - started) * 1000, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--companies", type=int, default=20)
    parser.add_argument("--volunteers", type=int, default=6, help="employees with sessions per company")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    print(f"seeding {args.companies} companies and one pass of the report schedule…")
    inputs = report_inputs(args.companies + 2, args.volunteers)
    # Two companies' reports warm the cache as a worker's earlier reports would (one in each
    # language); the others are measured, each the first time in its round its own lines are met.
    warmers, inputs = inputs[-2:], inputs[:-2]
    reports = [(report_from_input(data), data["language"]) for data in inputs]
    settings = Settings.from_env({"SECRET_KEY": "b"})
    without_pdf = replace(REPORT, attachment=lambda data, settings: None)  # the email around its PDF
    with page_as_before():
        expected = [text_of(filing_pdf(report, language)) for report, language in reports]  # warms imports too

    times: dict[str, list[float]] = {"before": [], "now": [], "first": [], "email": []}
    print(f"{args.rounds} rounds of {len(reports)} PDFs each way ({len(reports) // 2} in Norwegian)…")
    for _ in range(args.rounds):
        with page_as_before():
            for report, language in reports:
                ms, _ = cpu_ms(lambda: filing_pdf(report, language))  # noqa: B023
                times["before"].append(ms)
        pdf_page.wrapped.cache_clear()
        for data in warmers:
            filing_pdf(report_from_input(data), data["language"])
        for (report, language), text in zip(reports, expected, strict=True):
            ms, pdf = cpu_ms(lambda: filing_pdf(report, language))  # noqa: B023
            times["now"].append(ms)
            if text_of(pdf) != text:
                raise SystemExit(f"the PDF for {report.report_id} ({language}) says something else now")
        for report, language in reports:
            pdf_page.wrapped.cache_clear()
            ms, _ = cpu_ms(lambda: filing_pdf(report, language))  # noqa: B023
            times["first"].append(ms)
        for data in inputs:
            ms, _ = cpu_ms(lambda: without_pdf.render(data, settings, now=clock.utcnow()))  # noqa: B023
            times["email"].append(ms)

    before, now, first, email = (statistics.median(times[k]) for k in ("before", "now", "first", "email"))
    print(f"\n  before: p50 {before:6.1f} ms CPU per PDF, max {max(times['before']):.1f}")
    print(f"  now:    p50 {now:6.1f} ms CPU per PDF, max {max(times['now']):.1f}  (same text as before: checked)")
    print(f"  first of a language in a process: p50 {first:6.1f} ms")
    print(f"  the email around its PDF (bodies, subject): p50 {email:6.1f} ms")
    print(f"report pdf: {before:.1f} ms -> {now:.1f} ms per PDF (ratio {now / before:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
