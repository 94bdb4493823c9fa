"""What every kind of result provides: its document, its place in the history, its renderers.

A kind is one frozen `ResultKind` built in its own package and listed once in
`flashmark.kinds.registry`; the commands that read results look a result's kind up there and
never branch on it. Renderers import what they draw with when called, so listing the kinds
costs no more than importing their result types. The contract, field by field: docs/design.md,
"Result kinds".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from flashmark.codec import Codec
from flashmark.errors import printable

if TYPE_CHECKING:
    from markupsafe import Markup
    from rich.console import RenderableType

    from flashmark.references.records import ReferenceDevice

R = TypeVar("R")


@dataclass(frozen=True)
class Listing:
    """How the history lists a result: what was measured (a folder, a device) and a label
    (a profile, a command, a verdict)."""

    target: str
    label: str


@dataclass(frozen=True)
class CardIdentity:
    """The card (or device) a result measured, as far as it can be told again: `key` is what
    two results are compared by ("cid:9f5449...", "serial:0x0123abcd"), `name` how people read
    it (the probed device in one line)."""

    key: str
    name: str


def cid_identity(cid: str, name: str | None = None) -> CardIdentity:
    """A card by its CID register, compared as lower-case hex (as `flashmark probe` shows it);
    `name` the device in one line, if known."""
    cid = cid.lower()
    return CardIdentity(f"cid:{cid}", f"{name} (CID {cid})" if name else f"card with CID {cid}")


@dataclass(frozen=True)
class HtmlPart:
    """One part of the HTML report: its anchor (unique in the page), its heading and the nav's
    link, and its content. `body` is HTML the kind escaped itself (markupsafe, Jinja2
    autoescaping): the page inserts it as it is. A kind gives only parts with something in
    them: a link to nothing is a defect the browser tests look for."""

    anchor: str
    title: str
    body: Markup


@dataclass(frozen=True)
class HtmlEntry:
    """One result as the page lists it (its cards overview, its title, its footer): `name` its
    id ("#3"), `short` its name in a legend or a title ("#3 CARD on mmcblk0p1"), `anchor`
    where the section shows it. The overview's one-line answer is the kind's `summary`."""

    name: str
    short: str
    anchor: str


def short_target(path: str) -> str:
    """A result's target in a title or a legend: a device node as it is ("/dev/sdb"), a
    folder by its last name ("card"), as a run's legend names its folder; control characters
    escaped (flashmark.errors.printable)."""
    if path.startswith("/dev/"):
        return printable(path)
    return printable(path.rstrip("/").rsplit("/", 1)[-1] or path)


@dataclass(frozen=True)
class HtmlSection:
    """A kind's results in the HTML report.

    `entries` follow the results in the order given (one each). `charts` counts the drawn
    charts (each an <svg> in a <figure>) for the page's check that the browser drew them all;
    `not_shown` says in a sentence each what the results hold no data for (a block-size sweep
    without the full profile), instead of an empty part; `subtitle` and `footnote` are plain
    text the page adds to its header and footer.
    """

    parts: tuple[HtmlPart, ...]
    entries: tuple[HtmlEntry, ...]
    charts: int = 0
    not_shown: tuple[str, ...] = ()
    subtitle: str = ""
    footnote: str = ""


def section_of(
    part: HtmlPart,
    entries: Sequence[HtmlEntry],
    noun: str,
    *,
    charts: int = 0,
) -> HtmlSection:
    """A kind's section of one part listing `entries`, its subtitle the count of them: "1
    capacity probe", "3 surface scans"."""
    count = len(entries)
    return HtmlSection(
        parts=(part,),
        entries=tuple(entries),
        charts=charts,
        subtitle=f"{count} {noun}{'s' * (count != 1)}",
    )


LegendLine = Literal["solid", "dashed", "dotted", "bar", "published", "mark"]


@dataclass(frozen=True)
class LegendKey:
    """One entry of a chart's legend: its text, its colour and how its series is drawn (a
    line's style, a bar, a published figure's pale dashed bar, a mark under the axis)."""

    label: str
    colour: str
    line: LegendLine = "solid"


def legend_html(keys: Sequence[LegendKey]) -> Markup:
    """A chart's legend as HTML under the chart: page text that wraps, never an SVG label that
    a narrow screen would shrink or cut. The order is the chart's series order."""
    from markupsafe import Markup  # imported when a page is made, like the renderers

    items = (
        Markup('<li><span class="key {}" style="--key: {}"></span>{}</li>').format(
            key.line, key.colour, key.label
        )
        for key in keys
    )
    return Markup('<ul class="legend">{}</ul>').format(Markup("").join(items))


@dataclass(frozen=True)
class ResultKind(Generic[R]):
    """One kind of result and everything the commands that read results need of it: `name` (the
    history's kind and the word users see), `document` (its codec, whence `schema`, NAME/VERSION,
    and `to_document` / `from_document`: ResultFormatError for a document it cannot read whole),
    `summary` (the answer in one line: the `verdict:` line, the document's "summary", the HTML
    overview), its renderers (a missing format is refused by name), and `card` (the card a
    result measured, None where it does not say)."""

    name: str
    document: Codec[R]
    listing: Callable[[R], Listing]
    terminal: Callable[[R], RenderableType]
    summary: Callable[[R], str]
    markdown: Callable[[Sequence[R]], str] | None = None
    csv: Callable[[Sequence[R]], str] | None = None
    html: Callable[[Sequence[R], Sequence[ReferenceDevice]], HtmlSection] | None = None
    card: Callable[[R], CardIdentity | None] | None = None
    saved: bool = True  # kept in the history; False: printed only (probe, clean)

    @property
    def schema(self) -> str:
        return self.document.schema

    def to_document(self, result: R) -> dict[str, Any]:
        return self.document.write(result)

    def from_document(self, document: Mapping[str, Any]) -> R:
        return self.document.read(document)

    def formats(self) -> tuple[str, ...]:
        """The file formats this kind can be written as (json always)."""
        named = {"md": self.markdown, "csv": self.csv, "html": self.html}
        return ("json", *(name for name, render in named.items() if render is not None))
