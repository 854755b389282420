"""Markup in archive text stays inert in a real browser, on every page of the built site.

The factory archive is built twice (tests/site_hostile.py): with markup after every
text field, and with plain words. Headless Chromium loads every HTML page of the
hostile site, opens every tab, hovers every chart and runs the site search for the
payload; then no injected script has run, no element carries an event handler or
a ``javascript:`` address, and outside the charts each page has exactly the
elements of its plain twin.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import json
import threading

import pytest

from site_hostile import PAYLOAD, PLAIN, PLAIN_URLS, make_hostile_archive
from test_site_browser import CHROMIUM, Browser, _Quiet

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")

# Everything the page's DOM says about injection, as one JSON-able object.
INSPECT = r"""(function(){
  var all = Array.from(document.querySelectorAll('*'));
  var handlers = [], urls = [], classes = [], counts = {}, chartLinks = 0;
  all.forEach(function(el){
    Array.from(el.attributes).forEach(function(a){
      var n = a.name.toLowerCase(), v = (a.value || '').replace(/\s+/g, '').toLowerCase();
      if (n.indexOf('on') === 0) handlers.push(el.tagName + ' ' + n);
      if (/(^|:)(href|src|action|formaction|data|poster|srcdoc)$/.test(n) && /^(javascript|vbscript|data:text)/.test(v))
        urls.push(el.tagName + ' ' + n + '=' + v.slice(0, 40));
    });
    var cls = typeof el.className === 'string' ? el.className : (el.getAttribute('class') || '');
    if (cls.indexOf('pwn') >= 0) classes.push(el.tagName + '.' + cls);
    if (el.closest('.rap-chart')) { if (el.tagName.toLowerCase() === 'a') chartLinks += 1; return; }
    if (el.closest('.md-search__output')) return;
    counts[el.tagName] = (counts[el.tagName] || 0) + 1;
  });
  return {pwned: window.__pwned === undefined ? null : String(window.__pwned), handlers: handlers, urls: urls,
          classes: classes, chartLinks: chartLinks, counts: counts, title: document.title};
})()"""

OPEN_TABS_AND_HOVER = r"""(function(){
  document.querySelectorAll('.tabbed-labels label').forEach(function(l){ l.click(); });
  document.querySelectorAll('div.rap-chart').forEach(function(el){
    try { if (el.data) Plotly.Fx.hover(el, [{curveNumber: 0, pointNumber: 0}]); } catch (e) {}
  });
  return true;
})()"""

CHARTS_DRAWN = ("Array.from(document.querySelectorAll('div.rap-chart')).every(function(el){"
                "return el.offsetParent === null || el.querySelector('svg.main-svg');})")


@pytest.fixture(scope="module")
def twin_served(tmp_path_factory):
    if importlib.util.find_spec("websocket") is None:
        pytest.fail("the browser test needs the websocket-client package (pip install websocket-client)")
    from rapgen.pipeline import run_build

    base = tmp_path_factory.mktemp("browser-escaping")
    served = base / "www"
    served.mkdir()
    make_hostile_archive(base / "hostile")
    make_hostile_archive(base / "plain", PLAIN, PLAIN_URLS)
    for name in ("hostile", "plain"):
        run_build(base / name, served / name, resamples=20, work_dir=base / f"{name}-work")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(served)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    pages = sorted(p.relative_to(served / "hostile").as_posix() for p in (served / "hostile").rglob("*.html"))
    yield f"http://127.0.0.1:{server.server_address[1]}", pages
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    yield b
    b.close()


def _inspect(browser: Browser, url: str) -> dict:
    browser.goto(url)
    browser.wait_for(CHARTS_DRAWN)
    browser.evaluate(OPEN_TABS_AND_HOVER)
    browser.wait_for(CHARTS_DRAWN)
    return browser.evaluate(INSPECT)


def test_no_page_runs_or_grows_injected_markup(twin_served, browser):
    base, pages = twin_served
    assert len(pages) >= 10 and any(p.startswith("zh/models/") for p in pages)  # both languages
    for rel in pages:
        path = rel[: -len("index.html")] if rel.endswith("index.html") else rel
        browser.errors.clear()
        hostile = _inspect(browser, f"{base}/hostile/{path}")
        plain = _inspect(browser, f"{base}/plain/{path}")
        assert hostile["pwned"] is None, (rel, hostile["pwned"])
        assert hostile["handlers"] == [], (rel, hostile["handlers"])
        assert hostile["urls"] == [], (rel, hostile["urls"])
        assert hostile["classes"] == [], (rel, hostile["classes"])
        assert hostile["chartLinks"] == 0, rel
        diff = {t: (hostile["counts"].get(t), plain["counts"].get(t))
                for t in set(hostile["counts"]) | set(plain["counts"]) if hostile["counts"].get(t) != plain["counts"].get(t)}
        assert diff == {}, (rel, diff)
        assert not [e for e in browser.errors if "pwn" in e], (rel, browser.errors)


@pytest.mark.parametrize("lang", ["", "zh/"])
def test_titles_show_the_markup_as_text(twin_served, browser, lang):
    base, _ = twin_served
    state = _inspect(browser, f"{base}/hostile/{lang}models/model-a/")
    assert state["title"].startswith("Model A <script>window.__pwned=1</script><img src=x onerror=")
    heading = browser.evaluate("document.querySelector('article h1').textContent")
    assert heading.startswith("Model A <script>window.__pwned=1</script>") and "*pwn-em*{: onclick=" in heading
    topic = browser.evaluate("document.querySelector('.md-header__topic:last-child').textContent.trim()")
    assert topic.startswith("Model A <script>")


def test_search_results_stay_inert(twin_served, browser):
    base, _ = twin_served
    browser.goto(f"{base}/hostile/")
    browser.evaluate("document.querySelector('label[for=\"__search\"]').click()")
    browser.evaluate("""(function(){var i=document.querySelector('input.md-search__input'); i.focus(); i.value='pwn';
      i.dispatchEvent(new KeyboardEvent('keyup',{key:'n'})); i.dispatchEvent(new Event('input'));})()""")
    assert browser.wait_for("document.querySelectorAll('.md-search-result__item').length > 0", timeout=30)
    state = browser.evaluate(INSPECT)
    assert state["pwned"] is None and state["handlers"] == [] and state["urls"] == [] and state["classes"] == []
    injected = browser.evaluate("document.querySelectorAll('.md-search__output img, .md-search__output script, "
                                ".md-search__output iframe, .md-search__output svg').length")
    assert injected == 0
    assert json.dumps(PAYLOAD)  # the payload module is the one the site was built from
