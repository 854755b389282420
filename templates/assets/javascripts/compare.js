/* The Compare page: two entries from #rap-compare[data-compare] (the page's only data),
   side by side with pairs.csv's paired difference. Text goes in with textContent only.
   The choice lives in the URL: ?a=ENTRY&b=ENTRY&track=…&split=…
   Every word shown comes from the document's "text" (the page's language). */
(function () {
  var text = {};
  var say = window.rap.say;
  var fmt = window.rap.fmt;
  var own = window.rap.own;
  function signed(v) { var t = fmt(v); return v !== null && v !== undefined && parseFloat(t) > 0 ? "+" + t : t; }
  function options(sel, items, value) {
    sel.textContent = "";
    items.forEach(function (it) {
      var o = document.createElement("option");
      o.value = it[0]; o.textContent = it[2] === "baseline" ? say(text.baseline, {name: it[1]}) : it[1];
      sel.appendChild(o);
    });
    if (value !== null && items.some(function (it) { return it[0] === value; })) sel.value = value;
  }
  function td(tr, main, ci, sortKey) {
    var c = document.createElement("td");
    c.setAttribute("data-sort", sortKey === null || sortKey === undefined ? "" : sortKey.toFixed(6));
    c.appendChild(document.createTextNode(main));
    if (ci) { c.appendChild(document.createElement("br")); var s = document.createElement("small"); s.textContent = ci; c.appendChild(s); }
    tr.appendChild(c);
  }
  function ci(lo, hi) { return lo === null || hi === null || lo === undefined ? "" : "[" + fmt(lo) + ", " + fmt(hi) + "]"; }
  function render(doc, a, b, track, split) {
    var body = document.querySelector("#cmp-table tbody"), ts = track + "/" + split;
    body.textContent = "";
    var ia = doc.entries.findIndex(function (e) { return e[0] === a; }), ib = doc.entries.findIndex(function (e) { return e[0] === b; });
    var status = document.getElementById("cmp-status"), shown = 0;
    if (ia < 0 || ib < 0 || ia === ib) { status.textContent = text.same; return; }
    var ka = doc.entries[ia][2], kb = doc.entries[ib][2];
    doc.conditions.forEach(function (pair) {
      var cond = pair[0], label = pair[1];
      doc.metrics.forEach(function (m) {
        var key = cond + "/" + m[0], rows = own(own(doc.pairs, ts), key) || [], hit = null, flip = false;
        rows.forEach(function (r) {
          if (r[0] === ia && r[1] === ib) hit = r;
          else if (r[0] === ib && r[1] === ia) { hit = r; flip = true; }
        });
        if (!hit) return;
        var est = own(doc.est, ts);
        var ea = (own(est, (ka === "baseline" ? "BASE" : cond) + "/" + m[0]) || [])[ia];
        var eb = (own(est, (kb === "baseline" ? "BASE" : cond) + "/" + m[0]) || [])[ib];
        var d = flip ? [hit[2] === null ? null : -hit[2], hit[4] === null ? null : -hit[4], hit[3] === null ? null : -hit[3]]
                     : [hit[2], hit[3], hit[4]];
        var tr = document.createElement("tr");
        var c0 = document.createElement("td");
        c0.textContent = label;
        tr.appendChild(c0);
        var c1 = document.createElement("td");
        c1.textContent = m[1] + (m[2] === true ? " \u2191" : m[2] === false ? " \u2193" : "");
        c1.title = m[2] === true ? text.higher : m[2] === false ? text.lower : text.descriptive;
        tr.appendChild(c1);
        td(tr, ea ? fmt(ea[0]) : "\u2014", ea ? ci(ea[1], ea[2]) : "", ea ? ea[0] : null);
        td(tr, eb ? fmt(eb[0]) : "\u2014", eb ? ci(eb[1], eb[2]) : "", eb ? eb[0] : null);
        td(tr, signed(d[0]), ci(d[1], d[2]), d[0]);
        td(tr, String(hit[5]), "", hit[5]);
        body.appendChild(tr);
        shown += 1;
      });
    });
    status.textContent = shown ? say(text.shown, {a: doc.entries[ia][1], b: doc.entries[ib][1], n: shown}) : text.none;
  }
  document$.subscribe(function () {
    var box = document.getElementById("rap-compare");
    if (!box) return;
    var doc = JSON.parse(box.getAttribute("data-compare"));
    text = doc.text;
    var q = new URLSearchParams(window.location.search);
    var sa = document.getElementById("cmp-a"), sb = document.getElementById("cmp-b");
    var st = document.getElementById("cmp-track"), ss = document.getElementById("cmp-split");
    options(sa, doc.entries, q.get("a") || (doc.entries[0] || [null])[0]);
    options(sb, doc.entries, q.get("b") || (doc.entries[1] || [null])[0]);
    options(st, doc.tracks, q.get("track"));
    options(ss, doc.splits, q.get("split"));
    function update() {
      render(doc, sa.value, sb.value, st.value, ss.value);
      var u = new URL(window.location.href);
      u.searchParams.set("a", sa.value); u.searchParams.set("b", sb.value);
      u.searchParams.set("track", st.value); u.searchParams.set("split", ss.value);
      window.history.replaceState(window.history.state, "", u.pathname + u.search + u.hash);
    }
    [sa, sb, st, ss].forEach(function (s) { s.addEventListener("change", update); });
    update();
  });
})();
