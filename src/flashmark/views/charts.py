"""Charts as inline SVG, all drawn by one library (pygal) in one look: the report's fonts,
colours and sizes, no legend inside the drawing (the page writes it as text under it,
result_kind.legend_html), and no script, comment or URL in the SVG, for a page that never makes
a request (docs/reports.md, "Charts"). Imported only when a page draws a chart."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pygal.style import Style

from flashmark.result_kind import LegendKey
from flashmark.views.model import Figure

# Okabe & Ito's palette: told apart with the common colour-vision deficiencies and in grey
# print (https://jfly.uni-koeln.de/color/). Black is left out: it is the axes' colour.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442")
FONTS = 'system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", Arial, sans-serif'
# A character of FONTS is at most about 0.62 em wide (digits about 0.55 em).
CHAR_EM = 0.62
# One viewBox for every chart: two across on a laptop, one across a phone. Font sizes
# are in viewBox units; at 520 units a chart drawn 330 px wide on a phone has 9 px labels,
# and at 400-600 px on a laptop 11-16 px. The legend is page text under the chart.
SIZE = (520, 320)
MARGIN = 12
_SVG_NS = "http://www.w3.org/2000/svg"
_XLINK_NS = "http://www.w3.org/1999/xlink"


def style(colours: Sequence[str]) -> Style:
    """The report's look, the series in `colours` in turn."""
    return Style(
        background="#ffffff",
        plot_background="#ffffff",
        foreground="#222222",
        foreground_strong="#111111",
        foreground_subtle="#6b6b6b",
        opacity="0.85",
        opacity_hover="1",
        transition="0ms",
        colors=tuple(colours) or PALETTE,
        font_family=FONTS,
        title_font_size=18,
        label_font_size=14,
        major_label_font_size=14,
        value_font_size=13,
        tooltip_font_size=14,
        guide_stroke_color="#cccccc",
        major_guide_stroke_color="#aaaaaa",
    )


def config(colours: Sequence[str], **options: Any) -> dict[str, Any]:
    """A pygal chart's options: the report's look and `options` over it."""
    width, height = SIZE
    return {
        "width": width,
        "height": height,
        "style": style(colours),
        "js": (),
        "disable_xml_declaration": True,
        "explicit_size": False,
        "show_legend": False,  # the page's text under the chart (module docstring)
        "truncate_label": -1,
        "show_y_guides": True,
        "show_x_guides": False,
        "margin": MARGIN,
        "margin_right": 36,  # the last x label ("p99.99") is centred on the plot's edge
        **options,
    }


def _self_contained(root: Any) -> Any:
    """Drop every <script> and comment from pygal's SVG tree (see the module docstring).

    Works on xml.etree and lxml trees alike: in both, a comment's tag is the Comment factory
    (a callable), an element's tag a string, namespaced or not.
    """
    for parent in list(root.iter()):
        for child in list(parent):
            tag = child.tag
            if callable(tag) or str(tag).rsplit("}", 1)[-1] == "script":
                parent.remove(child)
    return root


def named(label: str) -> Callable[[Any], Any]:
    """An SVG filter: the drawing's name for a screen reader (its <title>, which pygal leaves
    "Pygal" where no title is drawn, and aria-label), not a title drawn in the chart."""

    def name(root: Any) -> Any:
        root.set("role", "img")
        root.set("aria-label", label)
        title = next(child for child in root if str(child.tag).rsplit("}", 1)[-1] == "title")
        title.text = label
        return root

    return name


def render(chart: Any, legend: Sequence[LegendKey]) -> Figure:
    """The chart's SVG, self-contained, with its legend (the page shows it under the drawing,
    result_kind.legend_html)."""
    chart.add_xml_filter(_self_contained)  # an attribute of the chart, not a config option
    svg = chart.render(is_unicode=True)
    assert isinstance(svg, str)
    # Inline in HTML the parser puts <svg> in the SVG namespace by itself; without the
    # declarations the report holds no URL at all, which its tests check.
    for declaration in (f' xmlns="{_SVG_NS}"', f' xmlns:xlink="{_XLINK_NS}"'):
        svg = svg.replace(declaration, "", 1)
    return Figure(svg, tuple(legend))
