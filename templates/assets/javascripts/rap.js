/* Helpers shared by the page scripts (leaderboard.js, compare.js, field.js), loaded before them. */
window.rap = {
  // A label of the page's own language with its {name} placeholders filled from v.
  say: function (tpl, v) {
    return String(tpl).replace(/\{(\w+)\}/g, function (m, k) { return Object.prototype.hasOwnProperty.call(v, k) ? v[k] : m; });
  },
  // obj[key] only when obj has key itself: a key from the URL or the page ("__proto__",
  // "constructor", "toString", "hasOwnProperty") never reaches Object.prototype.
  own: function (obj, key) {
    return obj !== null && typeof obj === "object" && Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
  },
  // A number as the tables show it: three decimals, an em dash when undefined, never "-0.000".
  fmt: function (v) {
    if (v === null || v === undefined) return "\u2014";
    var t = v.toFixed(3);
    return parseFloat(t) === 0 ? "0.000" : t;
  }
};
