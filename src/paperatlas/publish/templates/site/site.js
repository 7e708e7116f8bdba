/* Search page: MiniSearch over window.ATLAS.papers; status / topic / year filters; facets with counts over the
 * current results (each value a filter); sort keys (relevance, title, status, topic, rating, citations, year); the
 * results in pages of 100 (or all), with true counts; a query no paper matches says so; a Bookmarks view.
 * The filters and the sort order are kept in the page's URL (index.html?q=..&institution=Google&min_rating=6&sort=rating),
 * so a filtered list can be bookmarked or shared. A paper without a value (no review scores, no citation count) is
 * counted in no facet value and sorts last. Every text from the data is put in the DOM with textContent.
 * The filters mean what paperatlas.search.Filters (the CLI's and the web app's) means: status and decision
 * case-insensitive, ?year= a year or a range (2019-2021, 2019-, -2021), institution the whole normalised name. */
(function () {
  "use strict";
  var A = window.ATLAS, PAGE = 100, TOP = 8, MAX_VALUES = 40;
  var STEPS = A.steps || { rating: [], citations: [], confidence: [], spread: [] };
  var SORTS = ["relevance", "title", "status", "topic", "rating", "citations", "year"];
  // the facet filters beside the three selects: URL parameter -> value ("" = off)
  var PARAMS = ["institution", "decision", "min_rating", "max_spread", "min_confidence", "min_citations", "has_code"];
  var CHIP = { institution: "institution: ", decision: "decision: ", min_rating: "rating \u2265 ",
    max_spread: "rating spread \u2264 ", min_confidence: "confidence \u2265 ", min_citations: "citations \u2265 ",
    has_code: "code available" };
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
  var facets = $("facets"), chips = $("chips"), sortbar = $("sortbar");
  var showBookmarks = location.hash === "#bookmarks";
  var state = { sort: "relevance", page: 1, all: false, years: "" };
  PARAMS.forEach(function (k) { state[k] = ""; });

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
  function fmtInt(n) { return Number(n).toLocaleString("en-US"); }
  function num(v) { var x = parseFloat(v); return isFinite(x) ? x : null; }
  function has(p, field) { return p[field] !== undefined && p[field] !== null; }
  function codeOn() { return /^(1|true|yes|on)$/i.test(state.has_code); }

  // --- the URL: q, status, topic, year, sort, page/show and the facet filters ---------------------------------------------
  function setSelect(select, v) {  // the option whose value is v, whatever its case (?status=oral is Oral)
    var want = (v || "").trim().toLowerCase();
    var o = want && Array.prototype.find.call(select.options, function (x) { return x.value.toLowerCase() === want; });
    if (o) { select.value = o.value; }
  }
  function readURL() {
    var u = new URLSearchParams(location.search);
    if (u.get("q")) { q.value = u.get("q"); }
    setSelect(fStatus, u.get("status")); setSelect(fYear, u.get("year"));
    // a year or range the menu does not list (?year=2019-2021, 2019-, -2021, or a year of no paper), as the CLI reads it
    var y = (u.get("year") || "").trim();
    state.years = !fYear.value && /^(\d{4})?\s*-?\s*(\d{4})?$/.test(y) && /\d/.test(y) ? y : "";
    // ?topic=<id> (an area's or a sub-topic's id, as in the web app); ?area=a<id>|t<id> from older links
    var t = (u.get("topic") || "").trim();
    if (/^\d+$/.test(t)) { setSelect(fArea, "a" + t); if (!fArea.value) { setSelect(fArea, "t" + t); } }
    else { setSelect(fArea, t || u.get("area")); }
    PARAMS.forEach(function (k) { state[k] = (u.get(k) || "").trim(); });
    state.sort = SORTS.indexOf(u.get("sort")) >= 0 ? u.get("sort") : "relevance";
    state.page = Math.max(1, parseInt(u.get("page"), 10) || 1);
    state.all = u.get("show") === "all";
  }
  function query(change) {  // "?..." for the current state with change ({param: value, "" = off}) applied
    var cur = { q: q.value.trim(), status: fStatus.value, topic: fArea.value.slice(1),
      year: fYear.value || state.years,
      sort: state.sort === "relevance" ? "" : state.sort, page: state.page > 1 ? String(state.page) : "",
      show: state.all ? "all" : "" };
    PARAMS.forEach(function (k) { cur[k] = state[k]; });
    Object.keys(change || {}).forEach(function (k) { cur[k] = change[k]; });
    var u = new URLSearchParams();
    Object.keys(cur).forEach(function (k) { if (cur[k]) { u.append(k, cur[k]); } });
    var s = u.toString();
    return s ? "?" + s : "";
  }
  function writeURL() {
    try { history.replaceState(null, "", location.pathname + query() + location.hash); } catch (e) { /* not allowed */ }
  }

  // --- filters and sort ----------------------------------------------------------------------------------------
  function facetOK(p) {
    var inst = state.institution.toLowerCase(), x;
    if (inst && !(p.institutions || []).some(function (i) { return i.toLowerCase() === inst; })) { return false; }
    // the decision's whole text, case-insensitive (as paperatlas.search.Filters: the CLI and the web app)
    if (state.decision && (p.decision || "").toLowerCase() !== state.decision.toLowerCase()) { return false; }
    if (codeOn() && !p.code) { return false; }
    if ((x = num(state.min_rating)) !== null && !(has(p, "rating") && p.rating >= x)) { return false; }
    if ((x = num(state.min_citations)) !== null && !(has(p, "citations") && p.citations >= x)) { return false; }
    if ((x = num(state.min_confidence)) !== null && !(has(p, "confidence") && p.confidence >= x)) { return false; }
    return (x = num(state.max_spread)) === null || (has(p, "spread") && p.spread <= x);
  }
  function yearSpan() {  // [min, max] of state.years (null: open), as paperatlas.search.parse_years
    var m = /^(\d{4})?\s*(-)?\s*(\d{4})?$/.exec(state.years);
    if (!state.years || !m) { return null; }
    var lo = m[1] ? +m[1] : null, hi = m[3] ? +m[3] : (m[2] ? null : lo);
    return [lo, hi];
  }
  function inSpan(p, span) {  // a paper without a year is outside any bounded span
    if (!span) { return true; }
    var y = typeof p.year === "number" ? p.year : null;
    return (span[0] === null || (y !== null && y >= span[0])) && (span[1] === null || (y !== null && y <= span[1]));
  }
  var STATUS_RANK = { Oral: 0, Spotlight: 1, Poster: 2 };
  function byStatusTitle(a, b) {
    var ra = a.status in STATUS_RANK ? STATUS_RANK[a.status] : 3;
    var rb = b.status in STATUS_RANK ? STATUS_RANK[b.status] : 3;
    return ra - rb || a.title.localeCompare(b.title);
  }
  function topicOf(p) {
    return p.topic !== null && p.topic !== undefined ? A.topics[p.topic] || "" : (p.area !== null ? A.topics[p.area] || "" : "");
  }
  function sorted(list) {  // highest first; papers without the value last, in the order they had
    var key = state.sort;
    if (key === "relevance") { return list; }
    if (key === "title") {
      return list.slice().sort(function (a, b) { return a.title.localeCompare(b.title, "en", { sensitivity: "base" }); });
    }
    if (key === "status") { return list.slice().sort(byStatusTitle); }
    if (key === "topic") {
      return list.slice().sort(function (a, b) {
        var ta = topicOf(a), tb = topicOf(b);
        return (ta ? 0 : 1) - (tb ? 0 : 1) || ta.localeCompare(tb) || a.title.localeCompare(b.title);
      });
    }
    var have = [], missing = [];
    list.forEach(function (p, i) { (has(p, key) ? have : missing).push([p, i]); });
    have.sort(function (a, b) { return b[0][key] - a[0][key] || a[1] - b[1]; });
    return have.concat(missing).map(function (x) { return x[0]; });
  }

  // --- facets with counts over the current results -------------------------------------------------------------
  function facetSections(list) {
    var secs = [];
    function counted(key, title, values, current, top) {
      var c = new Map();
      values.forEach(function (v) { c.set(v, (c.get(v) || 0) + 1); });
      var items = Array.from(c.entries()).sort(function (a, b) {
        return b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
      }).slice(0, MAX_VALUES);
      var opts = items.map(function (it) {
        return { label: it[0], param: key, value: it[0], count: it[1], on: it[0].toLowerCase() === current.toLowerCase() };
      });
      if (opts.length) {
        secs.push({ key: key, title: title, opts: top ? opts.slice(0, top) : opts, more: top ? opts.slice(top) : [] });
      }
    }
    function steps(key, title, param, field, bounds, fmt, note, atMost) {
      var have = list.filter(function (p) { return has(p, field); }).map(function (p) { return p[field]; });
      var cur = num(state[param]), opts = [];
      bounds.forEach(function (b) {
        var n = have.filter(function (x) { return atMost ? x <= b : x >= b; }).length;
        var on = cur !== null && cur === b;
        if (n || on) { opts.push({ label: fmt(b), param: param, value: String(b), count: n, on: on }); }
      });
      if (opts.length) {
        secs.push({ key: key, title: title, opts: opts, more: [],
          note: note ? have.length + " of " + list.length + note : "" });
      }
    }
    var all = function (field) {  // every value of a field (a list field's items) over the results
      var xs = [];
      list.forEach(function (p) { if (has(p, field)) { xs.push.apply(xs, [].concat(p[field])); } });
      return xs;
    };
    counted("status", "Status", all("status").filter(Boolean), fStatus.value);
    counted("decision", "Decision", all("decision"), state.decision);
    steps("rating", "Mean rating", "min_rating", "rating", STEPS.rating,
      function (b) { return "\u2265 " + b; }, " have review scores");
    steps("spread", "Reviewers agree", "max_spread", "spread", STEPS.spread,
      function (b) { return "spread \u2264 " + b; }, "", true);
    steps("confidence", "Reviewer confidence", "min_confidence", "confidence", STEPS.confidence,
      function (b) { return "\u2265 " + b; });
    steps("citations", "Citations", "min_citations", "citations", STEPS.citations,
      function (b) { return "\u2265 " + fmtInt(b); }, " have a citation count");
    var nCode = list.filter(function (p) { return p.code; }).length;
    if (nCode || codeOn()) {
      secs.push({ key: "has_code", title: "Code", more: [],
        opts: [{ label: "code available", param: "has_code", value: "1", count: nCode, on: codeOn() }] });
    }
    counted("institution", "Institution", all("institutions"), state.institution, TOP);
    return secs;
  }
  function optList(opts, total) {
    var ul = el("ul");
    opts.forEach(function (o) {
      var li = el("li"), a = el("a", "fval" + (o.on ? " on" : "")), change = {};
      change[o.param] = o.on ? "" : o.value;
      a.href = "index.html" + query(change);
      a.setAttribute("data-param", o.param);
      a.setAttribute("data-value", change[o.param]);
      a.title = o.on ? "On: click to remove this filter" : "Show only these " + o.count;
      var bar = el("span", "fbar");
      bar.style.width = (100 * o.count / (total || 1)).toFixed(1) + "%";
      a.appendChild(bar);
      a.appendChild(el("span", "flabel", o.label));
      a.appendChild(el("span", "fcount", fmtInt(o.count)));
      li.appendChild(a);
      ul.appendChild(li);
    });
    return ul;
  }
  function renderFacets(list) {
    facets.textContent = "";
    var secs = facetSections(list);
    if (!secs.length) { return; }
    var h = el("h2", null, "Refine");
    h.appendChild(el("span", "n", "counts over " + fmtInt(list.length) + " result" + (list.length === 1 ? "" : "s")));
    facets.appendChild(h);
    secs.forEach(function (s) {
      var sec = el("section", "facet");
      sec.setAttribute("data-facet", s.key);
      sec.appendChild(el("h3", null, s.title));
      sec.appendChild(optList(s.opts, list.length));
      if (s.more.length) {
        var d = el("details", "fmore");
        d.appendChild(el("summary", null, s.more.length + " more"));
        d.appendChild(optList(s.more, list.length));
        sec.appendChild(d);
      }
      if (s.note) { sec.appendChild(el("p", "fnote", s.note)); }
      facets.appendChild(sec);
    });
  }
  function renderChips() {
    chips.textContent = "";
    if (state.years) {  // a year range from the URL (the menu lists single years)
      var y = el("a", "chip", "year: " + state.years);
      y.appendChild(el("span", "x", " \u00d7"));
      y.href = "index.html" + query({ year: "" });
      y.title = "Remove this filter";
      y.setAttribute("data-param", "years");
      y.setAttribute("data-value", "");
      chips.appendChild(y);
    }
    PARAMS.forEach(function (k) {
      if (!state[k] || (k === "has_code" && !codeOn())) { return; }
      var change = {};
      change[k] = "";
      var a = el("a", "chip", k === "has_code" ? CHIP[k] : CHIP[k] + state[k]);
      a.appendChild(el("span", "x", " \u00d7"));
      a.href = "index.html" + query(change);
      a.title = "Remove this filter";
      a.setAttribute("data-param", k);
      a.setAttribute("data-value", "");
      chips.appendChild(a);
    });
  }
  // a sort key no paper has a value for (no review scores, citation counts or years in this listing) is left off
  ["rating", "citations", "year"].forEach(function (k) {
    var b = sortbar.querySelector("button[data-sort='" + k + "']");
    if (b && !A.papers.some(function (p) { return has(p, k); })) { b.hidden = true; }
  });
  function paintSort(text) {
    sortbar.querySelectorAll("button[data-sort]").forEach(function (b) {
      var on = b.getAttribute("data-sort") === state.sort;
      b.className = on ? "on" : "";
      b.setAttribute("aria-pressed", on ? "true" : "false");
      if (b.getAttribute("data-sort") === "relevance") { b.textContent = text ? "Relevance" : "Default"; }
    });
  }

  // --- the results list ----------------------------------------------------------------------------------------
  function facetLine(p) {
    if (!has(p, "rating") && !has(p, "citations") && !p.code && !p.institutions) { return null; }
    var d = el("div", "facetline");
    if (has(p, "rating")) {
      var r = el("span", "rating", "\u2605 " + p.rating.toFixed(1));
      if (has(p, "spread")) { r.appendChild(el("span", "spread", " \u00b1 " + p.spread.toFixed(1))); }
      r.title = "mean review rating" + (has(p, "reviews") ? ", " + p.reviews + " reviews" : "");
      d.appendChild(r);
    }
    if (has(p, "citations")) {
      d.appendChild(el("span", "cites", fmtInt(p.citations) + " citation" + (p.citations === 1 ? "" : "s")));
    }
    if (p.code) { d.appendChild(el("span", "code", "code")); }
    if (p.institutions) {
      var more = p.institutions.length > 3 ? " +" + (p.institutions.length - 3) : "";
      d.appendChild(el("span", "insts", p.institutions.slice(0, 3).join(" \u00b7 ") + more));
    }
    return d;
  }
  function item(p) {
    var li = el("li");
    if (has(p, "rating")) { li.setAttribute("data-rating", p.rating); }
    if (has(p, "citations")) { li.setAttribute("data-citations", p.citations); }
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
    var line = facetLine(p);
    if (line) { li.appendChild(line); }
    if (p.tldr) { li.appendChild(el("div", "tldr", p.tldr)); }
    li.appendChild(outLinks(p));
    return li;
  }
  function outLinks(p) {  // its forum/PDF/arXiv/DOI links, else title searches on arXiv and Semantic Scholar
    var d = el("div", "outlinks"), t = encodeURIComponent(p.title).replace(/%20/g, "+");
    var links = p.out || [["Search arXiv", "https://arxiv.org/search/?query=" + t + "&searchtype=title"],
      ["Search Semantic Scholar", "https://www.semanticscholar.org/search?q=" + t]];
    links.forEach(function (l, i) {
      if (i) { d.appendChild(document.createTextNode(" \u00b7 ")); }
      var a = el("a", p.out ? "out" : "out search", l[0]);
      a.href = l[1]; a.rel = "noopener";
      d.appendChild(a);
    });
    return d;
  }
  function renderPager(total) {
    var nav = $("pager"), last = Math.max(1, Math.ceil(total / PAGE));
    nav.textContent = "";
    if (state.all || last === 1) { return; }
    var shown = [1, last], i;
    for (i = Math.max(1, state.page - 2); i <= Math.min(last, state.page + 2); i++) { shown.push(i); }
    shown = shown.filter(function (x, j) { return shown.indexOf(x) === j; }).sort(function (a, b) { return a - b; });
    shown.forEach(function (n, j) {
      if (j && n - shown[j - 1] > 1) { nav.appendChild(el("span", "gap", "\u2026")); }
      var a = el(n === state.page ? "span" : "a", "page" + (n === state.page ? " on" : ""), String(n));
      if (n !== state.page) { a.href = "index.html" + query({ page: n > 1 ? String(n) : "" }); a.setAttribute("data-page", n); }
      nav.appendChild(a);
    });
    var all = el("a", "showall", "Show all " + fmtInt(total));
    all.href = "index.html" + query({ page: "", show: "all" });
    all.setAttribute("data-page", "all");
    nav.appendChild(all);
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
    var st = fStatus.value.toLowerCase(), ar = fArea.value, yr = fYear.value, span = yearSpan();
    list = sorted(list.filter(function (p) {  // status case-insensitive, as paperatlas.search.Filters
      var inTopic = !ar || (ar.charAt(0) === "a" ? "a" + p.area === ar : "t" + p.topic === ar);
      return (!st || (p.status || "").toLowerCase() === st) && inTopic && (!yr || String(p.year) === yr) && inSpan(p, span) &&
        facetOK(p);
    }));
    renderFacets(list);
    renderChips();
    paintSort(text);
    var honest = $("honest");
    honest.textContent = "";
    honest.hidden = true;
    if (text && !showBookmarks && !list.length) {  // say so, never fill the page with something else
      var unfiltered = index.search(text).length;
      honest.textContent = unfiltered
        ? "No paper matching the filters mentions \u201c" + text + "\u201d (" + unfiltered + " paper" +
          (unfiltered === 1 ? "" : "s") + " without the filters)."
        : "No paper mentions \u201c" + text + "\u201d.";
      honest.hidden = false;
    }
    var last = Math.max(1, Math.ceil(list.length / PAGE));
    if (state.page > last) { state.page = last; }
    var from = state.all ? 0 : (state.page - 1) * PAGE, to = state.all ? list.length : from + PAGE;
    results.textContent = "";
    results.start = from + 1;
    list.slice(from, to).forEach(function (p) { results.appendChild(item(p)); });
    window.Bookmarks.paintAll(results);
    var what = showBookmarks ? " bookmarked" : "";
    count.textContent = fmtInt(list.length) + what + " paper" + (list.length === 1 ? "" : "s") +
      (list.length > to - from || from ? " (showing " + (from + 1) + "\u2013" + Math.min(to, list.length) + ")" : "");
    renderPager(list.length);
    bmButton.setAttribute("aria-pressed", showBookmarks ? "true" : "false");
    $("n-bookmarks").textContent = window.Bookmarks.load().length;
  }
  function changed() { state.page = 1; state.all = false; update(); writeURL(); }
  $("pager").addEventListener("click", function (ev) {
    var a = ev.target.closest && ev.target.closest("a[data-page]");
    if (!a || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.altKey || ev.button) { return; }
    ev.preventDefault();
    var n = a.getAttribute("data-page");
    if (n === "all") { state.all = true; } else { state.page = parseInt(n, 10); state.all = false; }
    update(); writeURL();
    window.scrollTo(0, 0);
  });

  function onFilterLink(ev) {  // a facet value or a chip: apply it here (a modified click opens its URL instead)
    var a = ev.target.closest && ev.target.closest("a[data-param]");
    if (!a || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.altKey || ev.button) { return; }
    ev.preventDefault();
    var param = a.getAttribute("data-param"), value = a.getAttribute("data-value");
    if (param === "status") { fStatus.value = value; } else { state[param] = value; }
    changed();
  }
  facets.addEventListener("click", onFilterLink);
  chips.addEventListener("click", onFilterLink);
  sortbar.addEventListener("click", function (ev) {
    var b = ev.target.closest && ev.target.closest("button[data-sort]");
    if (b) { state.sort = b.getAttribute("data-sort"); changed(); }
  });

  var timer = null;
  q.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { showBookmarks = false; changed(); }, 80);
  });
  [fStatus, fArea].forEach(function (s) { s.addEventListener("change", changed); });
  fYear.addEventListener("change", function () { state.years = ""; changed(); });
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
  readURL();
  update();
})();
