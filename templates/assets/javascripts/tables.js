/* Sortable tables (local tablesort 5.7.1) and the field-index filter.
   Tables opt in with data-sortable="desc" (higher first on the first click) or "asc".
   Headers are focusable and sort with Enter or Space, like a button. */
document$.subscribe(function () {
  document.querySelectorAll("article table[data-sortable]").forEach(function (table) {
    if (table.getAttribute("data-sort-ready")) return;
    new Tablesort(table, {descending: table.getAttribute("data-sortable") === "desc"});
    table.setAttribute("data-sort-ready", "1");
    table.querySelectorAll("thead th").forEach(function (th) {
      if (th.getAttribute("data-sort-method") === "none") return;
      th.setAttribute("tabindex", "0");
      th.addEventListener("keydown", function (ev) {
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); th.click(); }
      });
    });
  });
  var input = document.getElementById("field-filter");
  var table = document.getElementById("field-index");
  if (input && table) {
    input.addEventListener("input", function () {
      var q = input.value.trim().toLowerCase();
      table.querySelectorAll("tbody tr").forEach(function (tr) {
        tr.style.display = !q || tr.textContent.toLowerCase().indexOf(q) !== -1 ? "" : "none";
      });
    });
  }
});
