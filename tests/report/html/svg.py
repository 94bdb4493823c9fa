"""The geometry of the report's charts, read back from pygal's SVG and the legend the page
draws under it: which colour each legend entry is drawn in (the series at its place), where
the plot area is, where every point and every printed value lands.

What a reader would see wrong, as numbers a test can hold: a run changing colour between
charts, a point drawn outside its axes (clipped), two printed values on top of each other.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from dataclasses import dataclass

_FIGURE = re.compile(
    r"<figure>(<svg\b[^>]*class=\"pygal-chart\".*?</svg>)(<ul class=\"legend\">.*?</ul>)", re.S
)
# The page's legend: <li><span class="key LINE" style="--key: COLOUR"></span>LABEL</li>
_LEGEND_KEY = re.compile(r'<li><span class="key (\w+)" style="--key: ([^"]+)"></span>(.*?)</li>')
# pygal's minified rule: "#chart-1 .color-0,#chart-1 .color-0 a:visited{stroke:#0072B2;..."
_COLOUR_RULE = re.compile(
    r"\.color-(\d+),\s*#chart-[\w-]+ \.color-\d+ a:visited\s*\{\s*stroke:\s*(#[0-9A-Fa-f]{3,8})"
)
# A character of the system sans-serif fonts is at most about 0.62 em wide (digits 0.55).
CHAR_EM = 0.62
# The least room between two labels, in viewBox units (a quarter of a 13-unit font): closer,
# they read as one word.
GAP = 3.0


@dataclass(frozen=True)
class Box:
    left: float
    top: float
    right: float
    bottom: float

    def overlaps(self, other: Box, gap: float = GAP) -> bool:
        """Whether the two boxes touch, or come closer than `gap`: labels that abut read as
        one ("512k1M")."""
        return (
            self.left < other.right + gap
            and other.left < self.right + gap
            and self.top < other.bottom + gap
            and other.top < self.bottom + gap
        )


@dataclass(frozen=True)
class Label:
    text: str
    box: Box


@dataclass(frozen=True)
class LegendEntry:
    label: str
    key_colour: str  # the colour of its key in the page's legend
    drawn_colour: str  # the colour its series is drawn in (pygal's color-N of its place)


@dataclass(frozen=True)
class ChartGeometry:
    title: str
    legend: tuple[LegendEntry, ...]
    plot: Box  # the plot area, in the plot group's coordinates
    points: tuple[tuple[float, float], ...]  # every dot and line vertex
    values: tuple[Label, ...]  # numbers printed on bars
    x_labels: tuple[Label, ...]
    y_labels: tuple[Label, ...]  # left axis, right-aligned at their x


def chart_figures(page: str) -> list[tuple[str, str]]:
    """(SVG, legend HTML) of every pygal chart of a page."""
    return _FIGURE.findall(page)


def geometry(svg: str, legend_html: str = "") -> ChartGeometry:
    root = ElementTree.fromstring(svg)
    style = "".join(element.text or "" for element in root.iter("style"))
    colours = {int(index): colour.lower() for index, colour in _COLOUR_RULE.findall(style)}
    title = next((t.text or "" for t in root.iter("title")), "")
    # pygal numbers its series (serie-N, color-N) in the order the legend lists them
    drawn = {
        int(found.group(1)): colours.get(int(found.group(2)), "?")
        for group in root.iter("g")
        if (found := re.search(r"\bserie-(\d+) color-(\d+)", group.get("class", "")))
    }
    legend = tuple(
        LegendEntry(html.unescape(label), key.lower(), drawn.get(index, "?"))
        for index, (_line, key, label) in enumerate(_LEGEND_KEY.findall(legend_html))
    )
    plot_group = next(g for g in root.iter("g") if g.get("class", "").split() == ["plot"])
    background = next(r for r in plot_group.iter("rect") if "background" in r.get("class", ""))
    plot = Box(0.0, 0.0, float(background.get("width", 0)), float(background.get("height", 0)))
    points: list[tuple[float, float]] = []
    # pygal draws lines in g.plot and their dots in g.plot.overlay, both at the same origin
    layers = [g for g in root.iter("g") if g.get("class", "").split()[:1] == ["plot"]]
    for circle in (c for layer in layers for c in layer.iter("circle")):
        points.append((float(circle.get("cx", 0)), float(circle.get("cy", 0))))
    series = [g for layer in layers for g in layer.iter("g") if "series" in g.get("class", "")]
    for path in (p for group in series for p in group.iter("path")):
        if "line" in path.get("class", "").split():
            numbers = [
                float(n) for n in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", path.get("d", ""))
            ]
            points += list(zip(numbers[::2], numbers[1::2], strict=False))
    font = _font_size(style, r"\.text-overlay text\.value", 13.0)
    values = _labels(root, lambda classes: "text-overlay" in classes, font, anchor="middle")
    major = _font_size(style, r"\.axis text", 14.0)
    x_labels = _labels(root, lambda classes: classes[:2] == ["axis", "x"], major, anchor="middle")
    y_labels = _labels(root, lambda classes: classes[:2] == ["axis", "y"], major, anchor="end")
    return ChartGeometry(title, legend, plot, tuple(points), values, x_labels, y_labels)


def _labels(
    root: ElementTree.Element, group: Callable[[list[str]], bool], font: float, anchor: str
) -> tuple[Label, ...]:
    """Every text printed in the groups whose classes `group` accepts, with its box."""
    return tuple(
        _label(content, text, font, anchor)
        for element in root.iter("g")
        if group(element.get("class", "").split())
        for text in element.iter("text")
        if (content := "".join(text.itertext()).strip())
    )


def _label(content: str, text: ElementTree.Element, font: float, anchor: str) -> Label:
    """The box a text takes: pygal centres x labels on x, ends y labels at x, and sets y on
    the baseline (x labels) or a third of the font below the middle (y labels)."""
    x, y = float(text.get("x", 0)), float(text.get("y", 0))
    width = len(content) * CHAR_EM * font
    left = {"middle": x - width / 2, "end": x - width}.get(anchor, x)
    # Digits and capitals rise about 0.7 em above the baseline.
    top = y - 0.7 * font
    return Label(content, Box(left, top, left + width, y))


def _font_size(style: str, selector: str, default: float) -> float:
    found = re.search(selector + r"\s*\{[^}]*font-size:\s*([\d.]+)px", style)
    return float(found.group(1)) if found else default
