"""A page in headless Chromium at a phone's or a laptop's width, through the DevTools protocol.

`chromium --headless --window-size=390,...` lays a page out 500 px wide whatever it is told
(the headless window has a minimum width) and crops the screenshot to 390: a phone screenshot
taken that way shows a page cut off at the right edge that no phone would see. The protocol's
Emulation.setDeviceMetricsOverride sets the viewport itself, as DevTools' device mode does
(https://chromedevtools.github.io/devtools-protocol/tot/Emulation/#method-setDeviceMetricsOverride),
so the layout, the measurements taken from it and the screenshot are all at the width asked for.

The browser is driven over --remote-debugging-pipe (commands on its fd 3, replies on its fd 4,
each a JSON message ended by a NUL byte): no port is opened, nothing leaves the machine.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Quiet Chromium's own background traffic and keep all of it on this machine: for the
# DevTools sessions here and the command-line runs of tests/report/html/test_browser.py.
QUIET_FLAGS = (
    "--headless",
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--host-resolver-rules=MAP * ~NOTFOUND",
)
FLAGS = (*QUIET_FLAGS, "--hide-scrollbars")
TIMEOUT_S = 60.0

# Layout facts of the loaded page, read in the page by Runtime.evaluate (the page's own CSP
# does not apply to it). An element sticks out when its box passes the viewport's right edge
# and no ancestor clips or scrolls it: a reader would have to scroll the whole page sideways.
LAYOUT_FACTS = r"""(() => {
  const width = document.documentElement.clientWidth;
  const clippedBy = (element) => {
    for (let parent = element.parentElement; parent; parent = parent.parentElement)
      if (getComputedStyle(parent).overflowX !== "visible") return parent;
    return null;
  };
  const outside = [];
  for (const element of document.body.querySelectorAll("*")) {
    const box = element.getBoundingClientRect();
    if (box.width > 0 && (box.right > width + 0.5 || box.left < -0.5) && !clippedBy(element))
      outside.push(element.tagName.toLowerCase() + (element.className && typeof element.className
        === "string" ? "." + element.className.split(" ").join(".") : "") + ": "
        + (element.textContent || "").trim().slice(0, 60));
  }
  // Content that runs out of its own box (a long word past a card's edge), where no ancestor
  // scrolls or clips it: the page may still fit, but the text crosses a border or is cut.
  const spilling = [];
  for (const element of document.body.querySelectorAll("*")) {
    if (element.closest("svg") || element.clientWidth === 0) continue;
    if (getComputedStyle(element).overflowX !== "visible" || clippedBy(element)) continue;
    if (element.scrollWidth > element.clientWidth + 1)
      spilling.push(element.tagName.toLowerCase() + ": "
        + (element.textContent || "").trim().slice(0, 60));
  }
  // Text an SVG chart cuts off: a label whose box passes its drawing's viewBox.
  const cut = [];
  for (const svg of document.querySelectorAll("svg[viewBox]")) {
    const view = svg.viewBox.baseVal;
    for (const text of svg.querySelectorAll("text")) {
      if (!text.getComputedTextLength || text.getComputedTextLength() === 0) continue;
      const box = text.getBBox(), matrix = text.getCTM(), root = svg.getCTM();
      // the text's box in the viewBox's coordinates: through the screen and back
      const toView = root.inverse().multiply(matrix);
      const corners = [[box.x, box.y], [box.x + box.width, box.y + box.height]].map(
        ([x, y]) => new DOMPoint(x, y).matrixTransform(toView));
      const [xs, ys] = [corners.map((point) => point.x), corners.map((point) => point.y)];
      const [left, right] = [Math.min(...xs), Math.max(...xs)];
      const [top, bottom] = [Math.min(...ys), Math.max(...ys)];
      if (left < view.x - 0.5 || right > view.x + view.width + 0.5
          || top < view.y - 0.5 || bottom > view.y + view.height + 0.5)
        cut.push(text.textContent.trim().slice(0, 60));
    }
  }
  return {viewport: innerWidth, document_width: document.documentElement.scrollWidth,
    height: document.documentElement.scrollHeight, outside, spilling, cut};
})()"""


def find_chromium() -> str:
    """Debian's `chromium`; a test without it skips, or fails in CI (.ci/run installs it: a
    skip there would hide a failure)."""
    import pytest

    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        reason = "Chromium is not installed (apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return found


@dataclass(frozen=True)
class Layout:
    viewport: int  # CSS px
    document_width: int
    height: int
    outside: list[str]  # elements that stick out of the viewport, unclipped
    spilling: list[str]  # elements whose content runs out of their own box, unclipped
    cut: list[str]  # chart text that runs past its SVG's viewBox (cut off at the edge)


@dataclass
class Browser:
    """One headless Chromium driven over the DevTools pipe; use as a context manager."""

    chromium: str
    # an address let through the rule that sends every other name nowhere (a local service)
    allow_host: str | None = None
    console: list[str] = field(default_factory=list)
    _process: subprocess.Popen[bytes] | None = None
    _to_browser: int = -1
    _from_browser: int = -1
    _buffer: bytes = b""
    _next_id: int = 0
    _session: str = ""
    _events: list[dict[str, Any]] = field(default_factory=list)
    _profile: str = ""

    def __enter__(self) -> Browser:
        self._profile = tempfile.mkdtemp(prefix="flashmark-chromium-")
        try:
            self._start()
        except BaseException:
            self.__exit__()  # the browser, the pipes and the profile go whatever failed
            raise
        return self

    def _start(self) -> None:
        commands_read, self._to_browser = os.pipe()
        self._from_browser, replies_write = os.pipe()

        def onto_fds_3_and_4() -> None:  # in the child, before exec
            # dup to high numbers first: a pipe end may already sit on 3 or 4
            high_read, high_write = os.dup(commands_read), os.dup(replies_write)
            os.dup2(high_read, 3)
            os.dup2(high_write, 4)

        flags: tuple[str, ...] = FLAGS
        if self.allow_host is not None:
            flags = tuple(
                f"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE {self.allow_host}"
                if flag.startswith("--host-resolver-rules") else flag
                for flag in FLAGS
            )  # fmt: skip
        try:
            self._process = subprocess.Popen(
                [self.chromium, *flags, f"--user-data-dir={self._profile}",
                 "--remote-debugging-pipe", "about:blank"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                # 3 and 4 kept too: the child closes what is not listed after preexec_fn ran
                pass_fds=tuple(sorted({3, 4, commands_read, replies_write})),
                preexec_fn=onto_fds_3_and_4,
                env={**os.environ, "LC_ALL": "C"},
            )  # fmt: skip
        finally:
            os.close(commands_read)  # the browser's ends: only the browser holds them now
            os.close(replies_write)
        target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
        attached = self._call("Target.attachToTarget", {"targetId": target, "flatten": True})
        self._session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self._call(f"{domain}.enable", {})

    def __exit__(self, *exc: object) -> None:
        try:
            if self._process is not None and self._process.poll() is None:
                with contextlib.suppress(OSError, TimeoutError, RuntimeError):
                    self._call("Browser.close", {}, session=False)
                try:
                    self._process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self._process.kill()
                    self._process.wait()
        finally:
            for fd in (self._to_browser, self._from_browser):
                if fd >= 0:
                    os.close(fd)
            self._to_browser = self._from_browser = -1
            shutil.rmtree(self._profile, ignore_errors=True)

    def open(
        self, url: str, width: int, height: int = 900, *, mobile: bool = False, media: str = ""
    ) -> None:
        """Load `url` in a viewport `width` x `height` CSS px (a phone's: `mobile`, which
        honours the page's viewport meta as a phone does), its CSS for `media` ("print", or
        "" for the screen), and wait for its load event."""
        self._call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
        )
        self._call("Emulation.setEmulatedMedia", {"media": media})
        self._events.clear()
        self._call("Page.navigate", {"url": url})
        self._wait_for("Page.loadEventFired")

    def layout(self) -> Layout:
        return Layout(**self.evaluate(LAYOUT_FACTS))

    def evaluate(self, expression: str) -> Any:
        reply = self._call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in reply:
            raise RuntimeError(f"evaluating {expression[:60]!r}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def screenshot(self, path: Path) -> None:
        """The whole page, top to bottom, at the viewport's width."""
        reply = self._call(
            "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}
        )
        path.write_bytes(base64.b64decode(reply["data"]))

    # -- the pipe --------------------------------------------------------------------------

    def _call(self, method: str, params: dict[str, Any], *, session: bool = True) -> Any:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session and self._session:
            message["sessionId"] = self._session
        try:
            os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        except BrokenPipeError:
            raise RuntimeError(f"Chromium ({self.chromium}) closed its DevTools pipe") from None
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._note(reply)

    def _wait_for(self, event: str) -> None:
        while not any(seen.get("method") == event for seen in self._events):
            self._note(self._read())

    def _note(self, message: dict[str, Any]) -> None:
        """Keep events; what the page logs as an error or warning goes to `console`."""
        self._events.append(message)
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            self.console.append(str(params["exceptionDetails"].get("text")))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning"):
            self.console.append(" ".join(str(a.get("value")) for a in params.get("args", [])))
        elif method == "Log.entryAdded" and params["entry"].get("level") in ("error", "warning"):
            self.console.append(str(params["entry"].get("text")))

    def _read(self) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT_S
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise TimeoutError(f"Chromium said nothing for {TIMEOUT_S:.0f} s")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        result: dict[str, Any] = json.loads(message)
        return result
