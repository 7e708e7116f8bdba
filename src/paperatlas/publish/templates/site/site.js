/* Search page: MiniSearch over window.ATLAS.papers, filters, results list, Bookmarks view. */
(function () {
  "use strict";
  var A = window.ATLAS, LIMIT = 200;
  var byId = {};
  A.papers.forEach(function (p) { byId[p.id] = p; });
  var index = new MiniSearch({
    fields: ["title", "authors", "keyphrases", "tldr"],
    searchOptions: { boost: { title: 3, keyphrases: 1.5 }, prefix: true, fuzzy: 0.15, combineWith: "AND" }
  });
  index.addAll(A.papers);

  var $ = function (id) { return document.getElementById(id); };
  var q = $("q"), fStatus = $("f-status"), fArea = $("f-area"), fYear = $("f-year");
  var bmButton = $("show-bookmarks"), results = $("results"), count = $("count");
  var showBookmarks = location.hash === "#bookmarks";

  function addOptions(select, items) {
    items.forEach(function (it) {
      var o = document.createElement("option");
      o.value = String(it.value); o.textContent = it.label;
      select.appendChild(o);
    });
  }
  addOptions(fStatus, A.statuses.map(function (s) { return { value: s, label: s }; }));
  // the topic filter: each area ("a<id>"), then its sub-topics ("t<id>"), indented
  addOptions(fArea, A.areas.reduce(function (opts, a) {
    opts.push({ value: "a" + a.id, label: a.label });
    (a.topics || []).forEach(function (t) { opts.push({ value: "t" + t.id, label: "\u2003" + t.label }); });
    return opts;
  }, []));
  addOptions(fYear, A.years.map(function (y) { return { value: y, label: y }; }));

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  var STATUS_RANK = { Oral: 0, Spotlight: 1, Poster: 2 };
  function byStatusTitle(a, b) {
    var ra = a.status in STATUS_RANK ? STATUS_RANK[a.status] : 3;
    var rb = b.status in STATUS_RANK ? STATUS_RANK[b.status] : 3;
    return ra - rb || a.title.localeCompare(b.title);
  }

  function item(p) {
    var li = el("li");
    var a = el("a", "result-link", p.title);
    a.href = "paper/" + p.file + ".html";
    li.appendChild(a);
    li.appendChild(document.createTextNode(" "));
    if (p.status) { li.appendChild(el("span", "status status-" + p.status.toLowerCase(), p.status)); }
    var star = el("button", "star", "☆");
    star.type = "button"; star.setAttribute("data-id", p.id);
    li.appendChild(star);
    var label = p.topic !== null ? A.topics[p.topic] : (p.area !== null ? A.topics[p.area] : "");
    if (label) { li.appendChild(el("div", "topic-label", label)); }
    if (p.tldr) { li.appendChild(el("div", "tldr", p.tldr)); }
    return li;
  }

  function update() {
    var text = q.value.trim(), list;
    if (showBookmarks) {
      list = window.Bookmarks.load().map(function (id) { return byId[id]; }).filter(Boolean);
    } else if (text) {
      list = index.search(text).map(function (r) { return byId[r.id]; });
    } else {
      list = A.papers.slice().sort(byStatusTitle);
    }
    var st = fStatus.value, ar = fArea.value, yr = fYear.value;
    list = list.filter(function (p) {
      var inTopic = !ar || (ar.charAt(0) === "a" ? "a" + p.area === ar : "t" + p.topic === ar);
      return (!st || p.status === st) && inTopic && (!yr || String(p.year) === yr);
    });
    results.textContent = "";
    list.slice(0, LIMIT).forEach(function (p) { results.appendChild(item(p)); });
    window.Bookmarks.paintAll(results);
    var what = showBookmarks ? " bookmarked" : "";
    count.textContent = list.length + what + " paper" + (list.length === 1 ? "" : "s") +
      (list.length > LIMIT ? " (showing the first " + LIMIT + ")" : "");
    bmButton.setAttribute("aria-pressed", showBookmarks ? "true" : "false");
    $("n-bookmarks").textContent = window.Bookmarks.load().length;
  }

  var timer = null;
  q.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { showBookmarks = false; update(); }, 80);
  });
  [fStatus, fArea, fYear].forEach(function (s) { s.addEventListener("change", update); });
  bmButton.addEventListener("click", function () {
    showBookmarks = !showBookmarks;
    history.replaceState(null, "", showBookmarks ? "#bookmarks" : location.pathname + location.search);
    update();
  });
  window.addEventListener("hashchange", function () { showBookmarks = location.hash === "#bookmarks"; update(); });
  document.addEventListener("bookmarks-changed", function () {
    $("n-bookmarks").textContent = window.Bookmarks.load().length;
    if (showBookmarks) { update(); }
  });
  update();
})();
