"""Charts for the audit page: pure functions from numbers to inline SVG (no script, no
styles of their own: colors are presentation attributes, text is escaped)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

#: Bar colors by verdict (each at least 3:1 against white, told apart without hue too:
#: the legend and every bar's tooltip name the verdict).
VERDICT_COLORS: dict[str, str] = {
    "no_evidence": "#5c5c5c",
    "unknown_citation": "#8a4f00",
    "verifier_error": "#6a3d9a",
    "timeout": "#a3257a",
    "contradicted": "#b3261e",
    "prior_sufficient": "#00695c",
    "unsupported": "#1f5fa8",
    "insufficient_evidence": "#c05600",
    "grounded": "#2e7d32",
}
OTHER_COLOR = "#444444"
TEXT = "#1a1a1a"
GRID = "#767676"
BAR = "#1f5fa8"
MARK = "#b3261e"
#: The day chart is laid out for at least this many days.
MIN_SLOTS = 14


def _svg(width: int, height: int, label: str, body: list[str]) -> Markup:
    title = escape(label)
    return Markup(
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="100%" role="img" aria-label="{title}" font-family="sans-serif" '
        f'font-size="12"><title>{title}</title>{"".join(body)}</svg>'
    )


def days_by_verdict(days: Sequence[str], counts: Mapping[str, Sequence[int]], label: str) -> Markup:
    """A stacked bar per day (``YYYY-MM-DD``), one segment per verdict; ``counts`` maps each
    verdict to its count per day, in the order of ``days``."""
    width, height, left, bottom, top = 720, 220, 44, 36, 12
    plot_w, plot_h = width - left - 8, height - bottom - top
    totals = [sum(series[i] for series in counts.values()) for i in range(len(days))]
    peak = max(totals, default=0) or 1
    body = [
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
        f'stroke="{GRID}"/>'
    ]
    for tick in sorted({0, math.ceil(peak / 2), peak}):
        y = top + plot_h - plot_h * tick / peak
        body.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" fill="{TEXT}">{tick}</text>'
        )
    slot = plot_w / max(len(days), MIN_SLOTS)  # a few days: narrow bars, not blocks
    every = max(1, math.ceil(len(days) / 10))
    for i, day in enumerate(days):
        x, y = left + i * slot + slot * 0.1, top + plot_h
        for verdict, series in counts.items():
            if not series[i]:
                continue
            h = plot_h * series[i] / peak
            y -= h
            color = VERDICT_COLORS.get(verdict, OTHER_COLOR)
            tip = escape(f"{day}: {series[i]} {verdict}")
            body.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{slot * 0.8:.1f}" height="{h:.1f}" '
                f'fill="{color}"><title>{tip}</title></rect>'
            )
        if i % every == 0:
            body.append(
                f'<text x="{x + slot * 0.4:.1f}" y="{height - bottom + 16}" '
                f'text-anchor="middle" fill="{TEXT}">{escape(day[5:])}</text>'
            )
    return _svg(width, height, label, body)


@dataclass(frozen=True)
class Mark:
    """A threshold drawn across bars: a vertical line at ``at`` and its name."""

    name: str
    at: float


def bars(
    label: str,
    rows: Sequence[tuple[str, float | None]],
    marks: Sequence[Mark],
    top: float | None = None,
) -> Markup:
    """Horizontal bars, one per (name, value) row (None: "not computed"), on a scale from 0
    to ``top`` (default: the largest value or mark, with room), with each threshold in
    ``marks`` as a dashed line named under the bars."""
    values = [v for _, v in rows if v is not None] + [m.at for m in marks]
    top = top or max(max(values, default=1.0) * 1.15, 1e-9)
    width, left, right, row_h = 720, 200, 60, 30
    plot_w = width - left - right
    height = 14 + row_h * len(rows) + 20 * len(marks) + 10
    body: list[str] = []
    for i, (name, value) in enumerate(rows):
        y = 14 + i * row_h
        body.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end" fill="{TEXT}">')
        body.append(f"{escape(name)}</text>")
        if value is None:
            body.append(f'<text x="{left}" y="{y + 15}" fill="{TEXT}">not computed</text>')
            continue
        w = plot_w * min(max(value, 0.0), top) / top
        body.append(
            f'<rect x="{left}" y="{y + 2}" width="{w:.1f}" height="{row_h - 10}" fill="{BAR}">'
            f"<title>{escape(name)}: {value:.3f}</title></rect>"
            f'<text x="{left + w + 6:.1f}" y="{y + 15}" fill="{TEXT}">{value:.3f}</text>'
        )
    bottom = 14 + row_h * len(rows)
    for j, mark in enumerate(marks):
        x = left + plot_w * min(max(mark.at, 0.0), top) / top
        body.append(
            f'<line x1="{x:.1f}" y1="8" x2="{x:.1f}" y2="{bottom + 20 * j + 6}" stroke="{MARK}" '
            f'stroke-width="2" stroke-dasharray="5 3"/>'
            f'<text x="{x + 4 if x < width / 2 else x - 4:.1f}" y="{bottom + 20 * j + 16}" '
            f'text-anchor="{"start" if x < width / 2 else "end"}" fill="{TEXT}">'
            f"{escape(mark.name)} = {mark.at:.2f}</text>"
        )
    return _svg(width, height, label, body)


def swatch(verdict: str) -> Markup:
    """A small square in the verdict's chart color (decoration: hidden from readers)."""
    color = VERDICT_COLORS.get(verdict, OTHER_COLOR)
    return Markup(
        '<svg xmlns="http://www.w3.org/2000/svg" width="12" height="12" aria-hidden="true" '
        f'focusable="false"><rect width="12" height="12" fill="{color}"/></svg>'
    )
