/* Render every <div class="rap-chart" data-figure="…"> with the local plotly.js.
   Runs on Material's document$ (first load and each instant navigation); charts in
   a hidden content tab are drawn when their tab is first shown. */
(function () {
  var drawn = [];
  function visible(el) { return el.getClientRects().length > 0; }
  function draw(root) {
    root.querySelectorAll("div.rap-chart[data-figure]").forEach(function (el) {
      if (!visible(el)) return;
      if (el.getAttribute("data-drawn")) { Plotly.Plots.resize(el); return; }
      var fig = JSON.parse(el.getAttribute("data-figure"));
      el.setAttribute("data-drawn", "1");
      Plotly.newPlot(el, fig.data, fig.layout, {responsive: true, displaylogo: false});
      drawn.push(el);
    });
  }
  document$.subscribe(function () {
    drawn = drawn.filter(function (el) {
      if (document.body.contains(el)) return true;
      Plotly.purge(el);
      return false;
    });
    draw(document);
  });
  document.addEventListener("change", function (ev) {
    var input = ev.target;
    if (input && input.matches && input.matches(".tabbed-set > input")) {
      window.requestAnimationFrame(function () { draw(input.closest(".tabbed-set")); });
    }
  });
})();
