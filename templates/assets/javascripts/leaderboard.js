/* The leaderboard's metric and policy choice: swaps every panel's cells and redraws its
   forest plot from the one JSON document the page embeds (#lb-switch[data-switch]).
   Numbers only: nothing here writes text that came from the archive except the chart
   labels, which the page builder escaped. The choice is kept in the URL (?metric=&policy=).
   Every word shown comes from the document's "text" (the page's language). */
(function () {
  var text = {};
  var say = window.rap.say;
  var fmt = window.rap.fmt;
  var own = window.rap.own;
  function rank(r, tied) {
    if (r === null || r === undefined) return "\u2014";
    return (tied ? "=" : "") + (Number.isInteger(r) ? String(r) : r.toFixed(1));
  }
  function fill(td, v, best) {
    td.textContent = "";
    if (!v || v[0] === null) {
      td.setAttribute("data-sort", "");
      td.appendChild(document.createTextNode("\u2014"));
      return;
    }
    td.setAttribute("data-sort", v[0].toFixed(6));
    var main = document.createTextNode(fmt(v[0]));
    if (best) { var s = document.createElement("strong"); s.appendChild(main); td.appendChild(s); } else td.appendChild(main);
    if (v[1] !== null && v[2] !== null) {
      td.appendChild(document.createElement("br"));
      var ci = document.createElement("small");
      ci.textContent = "[" + fmt(v[1]) + ", " + fmt(v[2]) + "]";
      td.appendChild(ci);
    }
    if (v[3] !== null) {
      td.appendChild(document.createElement("br"));
      var rk = document.createElement("small");
      rk.className = "rap-rank";
      rk.title = v[4] ? text.tied_rank : text.rank;
      rk.textContent = text.rank + " " + rank(v[3], v[4]);
      td.appendChild(rk);
    }
  }
  function bestIndex(list, higher) {
    var best = null, at = -1;
    list.forEach(function (v, i) {
      if (!v || v[0] === null) return;
      if (best === null || (higher === false ? v[0] < best : v[0] > best)) { best = v[0]; at = i; }
    });
    return higher === null ? -1 : at;
  }
  function redraw(fig, panel, per, doc, metric) {
    var el = fig.querySelector("div.rap-chart[data-figure]");
    if (!el || !window.Plotly) return;
    var spec = JSON.parse(el.getAttribute("data-figure"));
    var labels = panel.labels.concat(panel.baseline_labels), n = labels.length;
    var series = doc.series, step = 0.6 / series.length, traces = [];
    series.forEach(function (name, si) {
      var cond = si < doc.conditions.length ? doc.conditions[si] : "BASE";
      var vals = cond === "BASE" ? per.BASE : per[cond], offset = cond === "BASE" ? panel.labels.length : 0;
      if (!vals || !vals.some(function (v) { return v && v[0] !== null; })) return;
      var style = spec.data.filter(function (t) { return t.name === name; })[0] || spec.data[0];
      var tr = JSON.parse(JSON.stringify(style));
      tr.name = name;
      tr.x = []; tr.y = []; tr.text = []; tr.error_x.array = []; tr.error_x.arrayminus = [];
      vals.forEach(function (v, i) {
        if (!v || v[0] === null) return;
        var li = offset + i;
        tr.x.push(v[0]);
        tr.y.push(Math.round(((n - 1 - li) + (series.length - 1) / 2 * step - si * step) * 1000) / 1000);
        tr.error_x.array.push(v[2] === null ? null : v[2] - v[0]);
        tr.error_x.arrayminus.push(v[1] === null ? null : v[0] - v[1]);
        tr.text.push(labels[li]);
      });
      traces.push(tr);
    });
    spec.layout.xaxis.title = {text: own(doc.metrics, metric).label};
    if (el.getAttribute("data-drawn")) Plotly.react(el, traces, spec.layout, {responsive: true, displaylogo: false});
    else el.setAttribute("data-figure", JSON.stringify({data: traces, layout: spec.layout}));  // drawn when its tab opens
  }
  function apply(box, doc, policy, metric) {
    var info = own(doc.metrics, metric);
    if (!info) return;
    var key = policy + "/" + metric, higher = info.higher;
    Object.keys(doc.panels).forEach(function (id) {
      var panel = doc.panels[id], per = own(panel.values, key);
      if (!per) return;
      var table = document.getElementById(id);
      if (table) {
        doc.conditions.forEach(function (cond, ci) {
          var best = bestIndex(per[cond], higher);
          panel.models.forEach(function (entry, i) {
            var mark = table.querySelector('td[data-entry="' + CSS.escape(entry) + '"]');
            if (mark) fill(mark.parentNode.children[2 + ci], per[cond][i], i === best);
          });
        });
      }
      var base = document.getElementById(id + "-baselines");
      if (base) {
        var bb = bestIndex(per.BASE, higher);
        panel.baselines.forEach(function (entry, i) {
          var mark = base.querySelector('td[data-entry="' + CSS.escape(entry) + '"]');
          if (mark) fill(mark.parentNode.children[1], per.BASE[i], i === bb);
        });
      }
      var fig = document.querySelector('figure[data-panel="' + CSS.escape(id) + '"]');
      if (fig) redraw(fig, panel, per, doc, metric);
    });
    var dir = higher === true ? text.higher : higher === false ? text.lower : text.descriptive;
    document.getElementById("lb-status").textContent = say(text.status, {metric: info.label, direction: dir, policy: policy});
    box.setAttribute("data-current", key);
  }
  document$.subscribe(function () {
    var box = document.getElementById("lb-switch");
    if (!box) return;
    var doc = JSON.parse(box.getAttribute("data-switch"));
    text = doc.text;
    var m = document.getElementById("lb-metric"), p = document.getElementById("lb-policy");
    var q = new URLSearchParams(window.location.search);
    function offered(sel, value) { return Array.prototype.some.call(sel.options, function (o) { return o.value === value; }); }
    if (own(doc.metrics, q.get("metric")) && offered(m, q.get("metric"))) m.value = q.get("metric");
    if (offered(p, q.get("policy"))) p.value = q.get("policy");
    function change() {
      apply(box, doc, p.value, m.value);
      var u = new URL(window.location.href);
      u.searchParams.set("metric", m.value); u.searchParams.set("policy", p.value);
      window.history.replaceState(window.history.state, "", u.pathname + u.search + u.hash);
    }
    m.addEventListener("change", change);
    p.addEventListener("change", change);
    if (m.value !== doc.primary[1] || p.value !== doc.primary[0]) apply(box, doc, p.value, m.value);
  });
})();
