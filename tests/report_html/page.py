"""Reading a report back: its elements, attributes and charts, with the standard HTML parser."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


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
    """Every element with its attributes, and each chart's title and legend entries."""

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
        if tag == "svg" and "pygal-chart" in attributes.get("class", ""):
            self.charts.append(Chart(attributes["class"]))
            self._svg_depth = 1
        elif self._svg_depth:
            self._svg_depth += 1
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
        if not self._svg_depth or not self.charts or not data.strip():
            return
        chart = self.charts[-1]
        # pygal: the chart's <title> comes first; legend texts are <text> in g.legend
        if self._in and self._in[-1].startswith("title") and not chart.title:
            chart.title = data.strip()
        elif len(self._in) >= 2 and self._in[-1].startswith("text") and "legend" in self._in[-2]:
            chart.legend.append(data.strip())

    def all(self, tag: str) -> list[Element]:
        return [element for element in self.elements if element.tag == tag]
