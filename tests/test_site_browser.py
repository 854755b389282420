"""The built site in a real browser: headless Chromium driven over the DevTools protocol.

Needs /usr/bin/chromium (Debian's ``chromium``; CI installs it) and the
``websocket-client`` package; skipped only when the browser is absent. The site
is built end to end from the factory archive (verify -> score -> render ->
mkdocs --strict) with ``site_url`` set to the local server, so Material's instant
navigation is active exactly as in production.
"""

from __future__ import annotations

import functools
import importlib.util
import http.server
import json
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
# What Chromium answers when the page it was asked about is being replaced by a navigation.
TRANSIENT = ("Inspected target navigated or closed", "Cannot find context with specified id",
             "Execution context was destroyed")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-allow-origins=*", "--remote-debugging-port=0", "--window-size=1400,1000"]


class Browser:
    """A minimal DevTools-protocol client: navigate, evaluate, collect errors and requests."""

    def __init__(self) -> None:
        import websocket  # websocket-client

        self.profile = tempfile.mkdtemp(prefix="rapgen-chromium-")
        self.proc = subprocess.Popen([str(CHROMIUM), *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.close()
                raise RuntimeError("chromium did not start its DevTools endpoint")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json") as resp:
            page = next(t for t in json.load(resp) if t["type"] == "page")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=60, suppress_origin=True)
        self.next_id = 0
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.loaded = False
        for method in ("Page.enable", "Runtime.enable", "Log.enable", "Network.enable"):
            self.call(method)

    def _event(self, msg: dict) -> None:
        method, params = msg.get("method"), msg.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append("console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            d = params.get("exceptionDetails", {})
            self.errors.append("exception: " + d.get("exception", {}).get("description", d.get("text", "")))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.errors.append("log: " + params["entry"].get("text", "") + " " + params["entry"].get("url", ""))
        elif method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            self.errors.append("network: " + params.get("errorText", ""))
        elif method == "Page.loadEventFired":
            self.loaded = True

    def call(self, method: str, **params) -> dict:
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self._event(msg)

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"evaluate failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def goto(self, url: str) -> None:
        self.loaded = False
        self.call("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'")

    def wait_for(self, expression: str, timeout: float = 20.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                value = self.evaluate(f"(function(){{try{{return {expression};}}catch(e){{return false;}}}})()")
            except RuntimeError as err:
                # A click or a switch that navigates can tear the page down between the
                # poll being sent and answered; the next poll asks the new page.
                if not any(m in str(err) for m in TRANSIENT):
                    raise
                value = False
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for: {expression}")

    def close(self) -> None:
        try:
            self.ws.close()
        except Exception:  # noqa: BLE001
            pass
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def served_site(tmp_path_factory):
    if importlib.util.find_spec("websocket") is None:  # chromium is there, so never skip silently
        pytest.fail("the browser test needs the websocket-client package (pip install websocket-client)")
    from factory import make_archive as factory_make  # tests/ is on sys.path (conftest)
    from rapgen.pipeline import run_build

    base = tmp_path_factory.mktemp("site-browser")
    root = factory_make(base / "repo").root
    site = base / "site"
    site.mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    port = server.server_address[1]
    run_build(root, site, resamples=50, site_url=f"http://127.0.0.1:{port}/")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}", root
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    yield b
    b.close()


SVG_COUNT = "document.querySelectorAll('div.rap-chart svg.main-svg').length"


def test_leaderboard_charts_sorting_and_console(served_site, browser):
    base, _ = served_site
    browser.errors.clear()
    browser.goto(f"{base}/leaderboard/")
    assert browser.wait_for(f"{SVG_COUNT} > 0")
    assert "Synthetic archive" in browser.evaluate("document.querySelector('.md-banner').textContent")
    # The forest plot of the visible (Test) tab rendered; Dev charts draw when their tab opens.
    visible_before = browser.evaluate(SVG_COUNT)
    browser.evaluate("document.querySelector('label[for=\"lb-split-2\"]').click()")
    browser.wait_for(f"{SVG_COUNT} > {visible_before}")
    browser.evaluate("document.querySelector('label[for=\"lb-split-1\"]').click()")
    # Sorting: the first click on a score column sorts descending, the second ascending.
    column = """(function(){
      var t = document.getElementById('leaderboard-test-all-origin-baselines');
      return Array.from(t.tBodies[0].rows).map(function(r){return parseFloat(r.cells[1].getAttribute('data-sort'));});
    })()"""
    browser.evaluate("document.querySelector('#leaderboard-test-all-origin-baselines th:nth-child(2)').click()")
    values = browser.evaluate(column)
    assert len(values) == 6 and values == sorted(values, reverse=True)
    browser.evaluate("document.querySelector('#leaderboard-test-all-origin-baselines th:nth-child(2)').click()")
    values = browser.evaluate(column)
    assert values == sorted(values)
    assert browser.evaluate("document.querySelector('#leaderboard-test-all-origin-baselines th:nth-child(2)').getAttribute('aria-sort')") == "ascending"
    assert browser.errors == []
    assert all(u.startswith((base, "data:", "blob:")) for u in browser.requests), [u for u in browser.requests if not u.startswith(base)]


def test_field_page_direct_load_and_instant_navigation(served_site, browser):
    base, _ = served_site
    browser.errors.clear()
    browser.goto(f"{base}/fields/alpha/")
    assert browser.wait_for(f"{SVG_COUNT} >= 2")
    assert browser.evaluate("document.querySelectorAll('h3[id^=\"d\"]').length") == 8
    # Instant navigation keeps the window object; charts must still render on the new page.
    browser.evaluate("window.__rapMarker = 42")
    browser.evaluate("document.querySelector('article a[href$=\"/fields/beta/\"]').click()")
    browser.wait_for("location.pathname === '/fields/beta/'")
    assert browser.wait_for(f"{SVG_COUNT} >= 2")
    assert browser.evaluate("window.__rapMarker") == 42, "navigation was not instant"
    assert browser.errors == []


def test_model_page_and_search_offline(served_site, browser):
    base, _ = served_site
    browser.errors.clear()
    browser.goto(f"{base}/models/model-a/")
    assert browser.wait_for(f"{SVG_COUNT} >= 1")
    assert "Search behaviour" in browser.evaluate("document.body.textContent")
    # The site's own search (lunr in a worker) answers without any network.
    browser.evaluate("document.querySelector('label[for=\"__search\"]').click()")
    browser.evaluate("""(function(){var i=document.querySelector('input.md-search__input'); i.focus(); i.value='alpha';
      i.dispatchEvent(new KeyboardEvent('keyup',{key:'a'})); i.dispatchEvent(new Event('input'));})()""")
    assert browser.wait_for("document.querySelectorAll('.md-search-result__item').length > 0", timeout=30)
    assert browser.errors == []


def test_404_page_loads_its_styles_and_scripts(served_site, browser):
    base, _ = served_site
    browser.errors.clear()
    browser.goto(f"{base}/404.html")
    assert browser.evaluate("getComputedStyle(document.querySelector('.md-header')).position") == "sticky"
    assert browser.evaluate("typeof document$ !== 'undefined'")  # Material's bundle ran
    assert "404" in browser.evaluate("document.querySelector('article').textContent")
    assert browser.errors == []


SWITCH_TO = """(function(lang){var a=document.querySelector('a.md-select__link[hreflang="'+lang+'"]'); a.click(); return a.getAttribute('href');})"""


def test_chinese_leaderboard_is_chinese_and_the_switch_round_trips(served_site, browser):
    base, _ = served_site
    browser.errors.clear()
    browser.goto(f"{base}/zh/leaderboard/")
    assert browser.wait_for(f"{SVG_COUNT} > 0")
    assert browser.evaluate("document.documentElement.lang") == "zh"
    assert browser.evaluate("document.querySelector('article h1').firstChild.textContent") == "排行榜"
    assert browser.evaluate("document.querySelector('label[for=\"lb-metric\"]').textContent") == "指标"
    assert browser.evaluate("document.querySelector('label[for=\"lb-split-1\"]').textContent") == "测试集"
    assert browser.evaluate("document.querySelector('input.md-search__input').placeholder") == "搜索"  # Material's own
    assert "合成档案" in browser.evaluate("document.querySelector('.md-banner').textContent")
    # the choice rewrites the status line in Chinese, from the page's embedded labels
    browser.evaluate("(function(){var s=document.getElementById('lb-metric'); s.value='tv'; s.dispatchEvent(new Event('change'));})()")
    assert browser.evaluate("document.getElementById('lb-status').textContent") == "当前显示：总变差距离（越低越好），canonical 计数策略。"
    assert browser.evaluate("document.querySelector('figure[data-panel] .xtitle').textContent") == "总变差距离"
    # to English and back: the same page, the choice kept in the address
    browser.evaluate(SWITCH_TO + "('en')")
    browser.wait_for("location.pathname === '/leaderboard/' && document.readyState === 'complete'")
    assert browser.wait_for("document.querySelector('article h1') && document.querySelector('article h1').firstChild.textContent") == "Leaderboard"
    assert browser.evaluate("location.search") == "?metric=tv&policy=canonical"
    assert browser.wait_for("document.getElementById('lb-status').textContent.indexOf('TV distance') === 8")
    assert browser.evaluate("document.documentElement.lang") == "en"
    browser.evaluate(SWITCH_TO + "('zh')")
    browser.wait_for("location.pathname === '/zh/leaderboard/' && document.readyState === 'complete'")
    assert browser.wait_for("document.querySelector('article h1') && document.querySelector('article h1').firstChild.textContent") == "排行榜"
    assert browser.errors == []


def test_the_switch_follows_instant_navigation_and_search_finds_chinese(served_site, browser):
    base, _ = served_site
    browser.errors.clear()
    browser.goto(f"{base}/zh/fields/alpha/")
    assert browser.wait_for(f"{SVG_COUNT} >= 2")
    browser.evaluate("window.__rapMarker = 7")
    browser.evaluate("document.querySelector('article a[href$=\"/fields/beta/\"]').click()")
    browser.wait_for("location.pathname === '/zh/fields/beta/'")
    assert browser.evaluate("window.__rapMarker") == 7, "navigation was not instant"
    # the header was not re-rendered, but its link now points at this page's English original
    assert browser.wait_for("document.querySelector('a.md-select__link[hreflang=\"en\"]').getAttribute('href') === '../../../fields/beta/'")
    browser.evaluate(SWITCH_TO + "('en')")
    browser.wait_for("location.pathname === '/fields/beta/' && document.readyState === 'complete'")
    # Chinese search: Material segments Chinese words at build time (jieba)
    browser.goto(f"{base}/zh/")
    browser.evaluate("document.querySelector('label[for=\"__search\"]').click()")
    browser.evaluate("""(function(){var i=document.querySelector('input.md-search__input'); i.focus(); i.value='置信区间';
      i.dispatchEvent(new KeyboardEvent('keyup',{key:'间'})); i.dispatchEvent(new Event('input'));})()""")
    assert browser.wait_for("document.querySelectorAll('.md-search-result__item').length > 0", timeout=30)
    assert browser.evaluate("Array.from(document.querySelectorAll('.md-search-result__link')).some("
                            "function(a){return a.getAttribute('href').indexOf('zh/') !== -1;})")
    assert browser.errors == []


def test_chinese_compare_and_field_picker_speak_chinese(served_site, browser):
    base, _ = served_site
    browser.errors.clear()
    browser.requests.clear()
    browser.goto(f"{base}/zh/compare/")
    assert browser.wait_for("document.querySelectorAll('#cmp-a option').length > 1")
    a, b = browser.evaluate("Array.from(document.querySelectorAll('#cmp-a option')).slice(0, 2).map(function(o){return o.value;})")
    browser.goto(f"{base}/zh/compare/?a={b}&b={a}")
    assert browser.wait_for("document.querySelectorAll('#cmp-table tbody tr').length > 0")
    assert browser.evaluate("[document.getElementById('cmp-a').value, document.getElementById('cmp-b').value]") == [b, a]
    status = browser.evaluate("document.getElementById('cmp-status').textContent")
    assert " 对比 " in status and status.endswith(" 行。"), status
    assert browser.evaluate("document.querySelector('#cmp-table tbody td').textContent") in (
        "封闭 (A0)", "固定窗口 (A1)", "扩展窗口 (A3)", "基线")
    browser.goto(f"{base}/zh/compare/?a={a}&b={a}")
    assert browser.wait_for("document.getElementById('cmp-status').textContent") == "请选择两个不同的条目。"
    browser.goto(f"{base}/zh/fields/alpha/")
    assert browser.wait_for(f"{SVG_COUNT} >= 2")
    browser.evaluate("(function(){var s=document.getElementById('fc-entry'); s.selectedIndex=0;"
                     " s.dispatchEvent(new Event('change'));})()")
    assert browser.evaluate("document.getElementById('fc-status').textContent").startswith("当前显示：")
    assert browser.evaluate("document.querySelector('#fc-figure .ytitle').textContent") == "预测份额"
    assert browser.errors == []
    assert all(u.startswith((base, "data:", "blob:")) for u in browser.requests), [u for u in browser.requests if not u.startswith(base)]


PROTOTYPE_NAMES = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"]


@pytest.mark.parametrize("lang", ["", "zh/"], ids=["en", "zh"])
def test_prototype_names_in_the_address_never_throw(served_site, browser, lang):
    """?metric=__proto__ and friends: every page script looks keys up as own properties only."""
    base, _ = served_site
    browser.goto(f"{base}/{lang}leaderboard/")
    assert browser.wait_for(f"{SVG_COUNT} > 0")
    default = browser.evaluate("[document.getElementById('lb-metric').value, document.getElementById('lb-status').textContent]")
    for name in PROTOTYPE_NAMES:
        browser.errors.clear()
        browser.goto(f"{base}/{lang}leaderboard/?metric={name}&policy={name}")
        assert browser.wait_for(f"{SVG_COUNT} > 0")
        assert browser.evaluate("[document.getElementById('lb-metric').value, document.getElementById('lb-status').textContent]") == default
        browser.evaluate("(function(){var s=document.getElementById('lb-metric'); s.dispatchEvent(new Event('change'));})()")
        assert browser.errors == [], (name, browser.errors)
        browser.goto(f"{base}/{lang}compare/?a={name}&b={name}&track={name}&split={name}")
        assert browser.wait_for("document.querySelectorAll('#cmp-a option').length > 1")
        assert browser.wait_for("document.getElementById('cmp-status').textContent.length > 0")
        assert browser.errors == [], (name, browser.errors)
    # an own-property lookup on a page document, from inside the page
    assert browser.evaluate("window.rap.own({}, '__proto__') === undefined && window.rap.own({constructor: 1}, 'constructor') === 1")
