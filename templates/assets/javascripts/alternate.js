/* The language menu: Material renders it once per full page load, so after an instant
   navigation its links would still point at the first page's translation. Each page
   carries its own (#rap-alternates, inside the swapped content); the links are reset
   from it, keep the address's query (?metric=&policy=, ?a=&b=) and load the other
   language in full (its header, search and scripts are that language's). */
document$.subscribe(function () {
  var box = document.getElementById("rap-alternates");
  if (!box) return;
  document.querySelectorAll("a.md-select__link[hreflang]").forEach(function (a) {
    var href = box.getAttribute("data-" + a.getAttribute("hreflang"));
    if (href) a.setAttribute("href", href);
  });
});
document.addEventListener("click", function (ev) {
  var a = ev.target.closest && ev.target.closest("a.md-select__link[hreflang]");
  if (!a) return;
  ev.stopPropagation();  // not Material's instant-navigation handler: a full load
  ev.preventDefault();
  var u = new URL(a.getAttribute("href"), window.location.href);
  u.search = window.location.search;
  window.location.assign(u.href);
}, true);
