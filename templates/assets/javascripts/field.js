/* The field page's forecast picker: redraws the forecast-versus-realised chart for the
   entry chosen, from #fc-picker[data-forecasts] (shares copied from units.parquet).
   Option labels go in with textContent; every word shown comes from the document's
   "text" (the page's language). */
document$.subscribe(function () {
  var say = window.rap.say, own = window.rap.own;
  var box = document.getElementById("fc-picker");
  if (!box) return;
  var doc = JSON.parse(box.getAttribute("data-forecasts")), text = doc.text;
  var sel = document.getElementById("fc-entry");
  sel.textContent = "";
  doc.options.forEach(function (o) {
    var opt = document.createElement("option");
    opt.value = o[0]; opt.textContent = o[1];
    sel.appendChild(opt);
  });
  var start = doc.options.filter(function (o) { return o[0] === "ewma/BASE"; })[0];
  if (start) sel.value = start[0];
  sel.addEventListener("change", function () {
    var el = document.querySelector("#fc-figure div.rap-chart[data-figure]");
    if (!el || !window.Plotly) return;
    var spec = JSON.parse(el.getAttribute("data-figure")), pts = own(doc.points, sel.value) || {}, top = 0.05;
    var label = sel.options[sel.selectedIndex].textContent;
    var traces = [spec.data[0]];
    spec.data.slice(1).forEach(function (t) {
      var fc = own(pts, t.name) || [], re = own(doc.realised, t.name) || [];
      var tr = JSON.parse(JSON.stringify(t));
      tr.x = []; tr.y = []; tr.text = [];
      doc.origins.forEach(function (o, i) {
        if (fc[i] === null || fc[i] === undefined || re[i] === null || re[i] === undefined) return;
        tr.x.push(re[i]); tr.y.push(fc[i]); tr.text.push(o);
        top = Math.max(top, re[i], fc[i]);
      });
      tr.hovertemplate = say(text.hover, {direction: t.name}) + "<extra></extra>";
      traces.push(tr);
    });
    top = Math.min(1, top * 1.1);
    traces[0] = JSON.parse(JSON.stringify(traces[0]));
    traces[0].x = [0, top]; traces[0].y = [0, top];
    spec.layout.xaxis.range = [0, top]; spec.layout.yaxis.range = [0, top];
    spec.layout.yaxis.title = {text: text.axis};
    if (el.getAttribute("data-drawn")) Plotly.react(el, traces, spec.layout, {responsive: true, displaylogo: false});
    document.getElementById("fc-status").textContent = say(text.status, {entry: label});
  });
});
