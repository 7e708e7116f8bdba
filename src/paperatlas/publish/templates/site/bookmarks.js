/* Bookmarks kept in localStorage: ☆ buttons (button.star[data-id]) toggle a paper id. */
(function () {
  "use strict";
  var KEY = "paperatlas-bookmarks";
  function load() {
    try {
      var v = JSON.parse(localStorage.getItem(KEY) || "[]");
      return Array.isArray(v) ? v : [];
    } catch (e) { return []; }
  }
  function save(ids) {
    try { localStorage.setItem(KEY, JSON.stringify(ids)); } catch (e) { /* storage disabled */ }
  }
  function has(id) { return load().indexOf(id) >= 0; }
  function paint(btn) {
    var on = has(btn.getAttribute("data-id"));
    btn.textContent = on ? "★" : "☆";
    btn.setAttribute("aria-pressed", on ? "true" : "false");
    btn.title = on ? "Remove bookmark" : "Bookmark";
  }
  function toggle(id) {
    var ids = load(), i = ids.indexOf(id);
    if (i >= 0) { ids.splice(i, 1); } else { ids.push(id); }
    save(ids);
    document.querySelectorAll("button.star").forEach(function (b) {
      if (b.getAttribute("data-id") === id) { paint(b); }
    });
    document.dispatchEvent(new CustomEvent("bookmarks-changed"));
  }
  document.addEventListener("click", function (ev) {
    var b = ev.target.closest && ev.target.closest("button.star");
    if (b) { ev.preventDefault(); toggle(b.getAttribute("data-id")); }
  });
  function paintAll(root) { (root || document).querySelectorAll("button.star").forEach(paint); }
  window.Bookmarks = { load: load, has: has, toggle: toggle, paintAll: paintAll };
  paintAll();
})();
