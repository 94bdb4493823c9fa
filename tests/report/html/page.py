"""Reading a report back: its elements, attributes and charts, with the standard HTML parser.

A chart is the <svg> of a <figure>; its legend is the page's list under it (ul.legend), in the
order of the chart's series."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

# Elements without an end tag (the HTML standard's void elements).
VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source"}
    | {"track", "wbr"}
)


@dataclass
class Element:
    tag: str
    attributes: dict[str, str]
    text: str = ""


@dataclass
class Chart:
    classes: str
    title: str = ""
    legend: list[str] = field(default_factory=list)


class Page(HTMLParser):
    """Every element with its attributes, and each chart's title (pygal's first <title>, or a
    plain chart's aria-label) and legend entries."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[Element] = []
        self.charts: list[Chart] = []
        self._open: list[str] = []
        self._svg_depth = 0
        self._in: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        self.elements.append(Element(tag, attributes))
        if tag == "svg" and self._in and self._in[-1].startswith("figure."):
            self.charts.append(Chart(attributes.get("class", ""), attributes.get("aria-label", "")))
            self._svg_depth = 1
        elif self._svg_depth:
            self._svg_depth += 1
        if tag not in VOID:  # no end tag follows them
            self._in.append(f"{tag}.{attributes.get('class', '')}")

    def handle_endtag(self, tag: str) -> None:
        if self._in:
            self._in.pop()
        if self._svg_depth:
            self._svg_depth -= 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append(Element(tag, {name: value or "" for name, value in attrs}))

    def handle_data(self, data: str) -> None:
        if self.elements:
            self.elements[-1].text += data
        if not self.charts or not data.strip():
            return
        chart = self.charts[-1]
        if self._svg_depth:
            # pygal: the chart's <title> comes first
            if self._in and self._in[-1].startswith("title") and not chart.title:
                chart.title = data.strip()
        elif len(self._in) >= 3 and self._in[-1].startswith("li.") and (
            self._in[-2] == "ul.legend" and self._in[-3].startswith("figure.")
        ):
            chart.legend.append(data.strip())

    def all(self, tag: str) -> list[Element]:
        return [element for element in self.elements if element.tag == tag]
