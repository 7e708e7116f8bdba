/* atlasmap.js: the interactive paper map of paperatlas, drawn with Plotly.js (scattergl, WebGL).
 *
 * Shared by the web app (/map and the overview on /) and by the standalone file that
 * `paperatlas publish --format map` writes. Needs the global `Plotly` (plotly.min.js) loaded first.
 *
 *   AtlasMap.mount(container, options) -> Promise of the map controller
 *     options.data       the payload of paperatlas.atlasmap.map_payload (parallel arrays, one entry per paper), or
 *     options.dataUrl    a URL serving that payload as JSON;
 *     options.paperHref  a URL with __ID__ for a paper's page: clicks and the selection list go there; without it
 *                        a paper opens its own `url` (if any) in a new tab;
 *     options.topicHref  a URL with __ID__ for a topic's page: clicking a map label goes there (optional);
 *     options.compact    a smaller map without the legend.
 *
 * The controller: {gd, data, search(query) -> Promise, setDragmode(mode), clearSelection(), updateLabels()}.
 * The container records its state for scripts and tests: data-ready="1" after the first render (and
 * data-render-ms, milliseconds since navigation start), data-label-level ("area" or "topic"), data-matches (the
 * number of papers the search highlights, "" without a query) and data-selected (number of papers selected).
 */
(function (global) {
  'use strict';

  var WRAP_CHARS = 80;        // hover text is broken into lines of about this many characters
  var LABEL_CHARS = 38;       // longer labels are cut with an ellipsis
  var MAX_LISTED = 500;       // the selection panel lists at most this many papers (the count is always exact)
  var STATUS_ORDER = {Oral: 0, Spotlight: 1, Poster: 2};

  function esc(s) {
    return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  }

  /* Plotly pseudo-HTML for `s`: escaped, with <br> between lines of about `width` characters. */
  function wrap(s, width) {
    var words = String(s).split(/\s+/), lines = [], line = '';
    for (var i = 0; i < words.length; i++) {
      var w = words[i];
      if (!w) continue;
      if (line && line.length + 1 + w.length > width) { lines.push(line); line = w; }
      else line = line ? line + ' ' + w : w;
    }
    if (line) lines.push(line);
    return lines.map(esc).join('<br>');
  }

  function cut(s, n) { s = String(s); return s.length > n ? s.slice(0, n - 1) + '\u2026' : s; }

  function node(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }

  function webglAvailable() {
    try {
      var c = document.createElement('canvas');
      return !!(c.getContext('webgl') || c.getContext('experimental-webgl'));
    } catch (e) { return false; }
  }

  function loadData(options) {
    if (options.data) return Promise.resolve(options.data);
    return fetch(options.dataUrl, {credentials: 'same-origin'}).then(function (r) {
      if (!r.ok) throw new Error(options.dataUrl + ': HTTP ' + r.status);
      return r.json();
    });
  }

  function buildDom(container, compact) {
    container.classList.add('atlasmap');
    if (compact) container.classList.add('atlasmap-compact');
    container.textContent = '';
    var bar = node('div', 'atlasmap-bar');
    var input = node('input', 'atlasmap-search');
    input.type = 'search';
    input.placeholder = 'Highlight papers: words in title, TL;DR, keyphrases, authors';
    input.setAttribute('aria-label', 'Highlight papers on the map');
    var count = node('span', 'atlasmap-count');
    count.setAttribute('aria-live', 'polite');
    var modes = node('span', 'atlasmap-modes');
    var buttons = {};
    [['zoom', 'Zoom'], ['pan', 'Pan'], ['select', 'Box select'], ['lasso', 'Lasso']].forEach(function (m) {
      var b = node('button', 'atlasmap-mode', m[1]);
      b.type = 'button';
      b.dataset.mode = m[0];
      modes.appendChild(b);
      buttons[m[0]] = b;
    });
    bar.appendChild(input); bar.appendChild(count); bar.appendChild(modes);
    var body = node('div', 'atlasmap-body');
    var plot = node('div', 'atlasmap-plot', 'Loading the map\u2026');
    var panel = node('aside', 'atlasmap-panel');
    var head = node('div', 'atlasmap-selhead');
    var selcount = node('span', 'atlasmap-selcount', 'Select papers with Box select or Lasso to list them here.');
    var clear = node('button', 'atlasmap-clear', 'Clear');
    clear.type = 'button';
    clear.hidden = true;
    head.appendChild(selcount); head.appendChild(clear);
    var list = node('ol', 'atlasmap-sel');
    panel.appendChild(head); panel.appendChild(list);
    body.appendChild(plot); body.appendChild(panel);
    container.appendChild(bar); container.appendChild(body);
    return {input: input, count: count, buttons: buttons, plot: plot, selcount: selcount, clear: clear, list: list};
  }

  function mount(container, options) {
    options = options || {};
    var ui = buildDom(container, !!options.compact);
    return loadData(options).then(function (d) {
      return draw(container, ui, d, options);
    }).catch(function (err) {
      ui.plot.textContent = 'The map could not be drawn: ' + err.message;
      container.dataset.error = err.message;
      throw err;
    });
  }

  function draw(container, ui, d, options) {
    if (typeof Plotly === 'undefined') throw new Error('Plotly.js is not loaded');
    var n = d.ids.length;
    var zoomSub = d.zoom_subtopics || 0.45;
    var glType = webglAvailable() ? 'scattergl' : 'scatter';
    var gd = ui.plot;
    gd.textContent = '';

    function hoverOf(i) {
      var out = '<b>' + wrap(d.title[i], WRAP_CHARS) + '</b>';
      if (d.tldr[i]) out += '<br>' + wrap(d.tldr[i], WRAP_CHARS);
      var meta = [];
      if (d.status[i]) meta.push(d.status[i]);
      var t = d.topic[i] >= 0 ? d.topics[d.topic[i]] : null, a = d.area[i] >= 0 ? d.areas[d.area[i]] : null;
      if (t) meta.push(t.label + (a ? ' (' + a.label + ')' : ''));
      else if (a) meta.push(a.label);
      if (d.low[i]) meta.push('topic uncertain');
      if (meta.length) out += '<br><i>' + esc(meta.join(' \u00b7 ')) + '</i>';
      return out;
    }
    var hover = new Array(n);
    for (var i = 0; i < n; i++) hover[i] = hoverOf(i);
    function colorOf(i) { return d.area[i] >= 0 ? d.areas[d.area[i]].color : '#999999'; }

    // one trace per area (so the legend lists and toggles areas), then one overlay trace for search matches
    var groups = {};
    for (i = 0; i < n; i++) (groups[d.area[i]] = groups[d.area[i]] || []).push(i);
    var order = [];
    d.areas.forEach(function (_a, k) { if (groups[k]) order.push(k); });
    if (groups[-1]) order.push(-1);
    var members = order.map(function (a) { return groups[a]; });   // trace number -> global paper indices
    var traceArea = order.slice();                                 // trace number -> area index (-1: no topic)
    var traces = order.map(function (a) {
      var idx = groups[a];
      return {
        type: glType, mode: 'markers',
        name: a >= 0 ? cut(d.areas[a].label, LABEL_CHARS) + ' (' + idx.length + ')' : 'No topic (' + idx.length + ')',
        x: idx.map(function (j) { return d.x[j]; }), y: idx.map(function (j) { return d.y[j]; }),
        hovertext: idx.map(function (j) { return hover[j]; }), hovertemplate: '%{hovertext}<extra></extra>',
        marker: {color: a >= 0 ? d.areas[a].color : '#999999', opacity: 0.8,
                 size: idx.map(function (j) { return d.low[j] ? 4 : 6; })}
      };
    });
    var overlay = traces.length;
    members.push([]);
    traceArea.push(null);
    traces.push({type: glType, mode: 'markers', name: 'matches', showlegend: false, x: [], y: [], hovertext: [],
                 hovertemplate: '%{hovertext}<extra></extra>',
                 marker: {size: 10, color: [], opacity: 1, line: {color: '#111111', width: 1.2}}});

    var layout = {
      margin: {l: 6, r: 6, t: 6, b: 6}, autosize: true,
      xaxis: {visible: false}, yaxis: {visible: false},
      dragmode: 'zoom', hovermode: 'closest', clickmode: 'event',
      showlegend: !options.compact && order.length > 1,
      legend: {itemsizing: 'constant', font: {size: 11}, title: {text: 'Areas'}, bgcolor: 'rgba(255,255,255,0.85)'},
      hoverlabel: {align: 'left', bgcolor: '#ffffff', bordercolor: '#888888', font: {size: 12, color: '#111111'}},
      plot_bgcolor: '#ffffff', paper_bgcolor: '#ffffff', annotations: []
    };
    var config = {displaylogo: false, scrollZoom: true, responsive: true, modeBarButtonsToRemove: ['autoScale2d']};

    var state = {full: null, labelKey: null, matches: [], hay: null, selected: []};

    function globalIndex(pt) {
      var k = pt.pointIndex != null ? pt.pointIndex : pt.pointNumber;
      return members[pt.curveNumber] ? members[pt.curveNumber][k] : undefined;
    }

    function hiddenAreas() {
      var hidden = {};
      (gd.data || []).forEach(function (t, k) { if (k < overlay && t.visible === 'legendonly') hidden[traceArea[k]] = 1; });
      return hidden;
    }

    function updateLabels() {
      var fl = gd._fullLayout;
      if (!fl || !state.full) return Promise.resolve();
      var xr = fl.xaxis.range.map(Number), yr = fl.yaxis.range.map(Number);
      var rx = Math.abs((xr[1] - xr[0]) / (state.full.x[1] - state.full.x[0]));
      var ry = Math.abs((yr[1] - yr[0]) / (state.full.y[1] - state.full.y[0]));
      var level = Math.sqrt(rx * ry) < zoomSub && d.topics.length ? 'topic' : 'area';
      var cands = level === 'topic' ? d.topics : d.areas;
      var hidden = hiddenAreas();
      var w = (fl._size && fl._size.w) || gd.clientWidth, h = (fl._size && fl._size.h) || gd.clientHeight;
      var x0 = Math.min(xr[0], xr[1]), x1 = Math.max(xr[0], xr[1]);
      var y0 = Math.min(yr[0], yr[1]), y1 = Math.max(yr[0], yr[1]);
      var boxes = [], anns = [];
      cands.forEach(function (c, k) {
        if (c.x == null || c.y == null || c.x < x0 || c.x > x1 || c.y < y0 || c.y > y1) return;
        var areaIdx = level === 'topic' ? c.area : k;
        if (hidden[areaIdx]) return;
        var text = cut(c.label, LABEL_CHARS);
        var fs = level === 'area' ? 13 : 11;
        var px = (c.x - x0) / (x1 - x0) * w, py = (y1 - c.y) / (y1 - y0) * h;
        var bw = text.length * fs * 0.58 + 10, bh = fs + 8;
        var box = [px - bw / 2, py - bh / 2, px + bw / 2, py + bh / 2];
        for (var b = 0; b < boxes.length; b++) {
          var o = boxes[b];
          if (box[0] < o[2] && o[0] < box[2] && box[1] < o[3] && o[1] < box[3]) return;  // overlaps a bigger one
        }
        boxes.push(box);
        var area = areaIdx >= 0 ? d.areas[areaIdx] : null;
        anns.push({x: c.x, y: c.y, xref: 'x', yref: 'y', showarrow: false, text: (level === 'area' ? '<b>' + esc(text) + '</b>' : esc(text)),
                   hovertext: esc(c.label + ' \u00b7 ' + c.size + ' papers'),
                   font: {size: fs, color: '#111111'}, bgcolor: 'rgba(255,255,255,0.82)',
                   bordercolor: area ? area.color : '#999999', borderwidth: level === 'area' ? 1.5 : 1, borderpad: 2,
                   name: level + ':' + c.id, captureevents: !!options.topicHref});
      });
      var key = level + '|' + anns.map(function (a) { return a.name; }).join(',');
      container.dataset.labelLevel = level;
      if (key === state.labelKey) return Promise.resolve();
      state.labelKey = key;
      return Plotly.relayout(gd, {annotations: anns});
    }

    function haystack() {
      if (!state.hay) {
        state.hay = new Array(n);
        for (var j = 0; j < n; j++) {
          state.hay[j] = (d.title[j] + ' ' + d.tldr[j] + ' ' + d.keyphrases[j] + ' ' + d.authors[j]).toLowerCase();
        }
      }
      return state.hay;
    }

    function search(query) {
      var words = String(query || '').toLowerCase().split(/\s+/).filter(Boolean);
      var hits = [];
      if (words.length) {
        var hay = haystack();
        for (var j = 0; j < n; j++) {
          var s = hay[j], ok = true;
          for (var w = 0; w < words.length && ok; w++) ok = s.indexOf(words[w]) !== -1;
          if (ok) hits.push(j);
        }
      }
      state.matches = hits;
      container.dataset.matches = words.length ? String(hits.length) : '';
      ui.count.textContent = words.length ? hits.length + ' of ' + n + ' papers match' : '';
      members[overlay] = hits;
      // one Plotly.react (a single redraw) rather than two restyles: dim the area traces, refill the overlay
      var opacity = words.length ? 0.12 : 0.8;
      var next = gd.data.map(function (tr, k) {
        if (k < overlay) return Object.assign({}, tr, {marker: Object.assign({}, tr.marker, {opacity: opacity})});
        return Object.assign({}, tr, {
          x: hits.map(function (j) { return d.x[j]; }), y: hits.map(function (j) { return d.y[j]; }),
          hovertext: hits.map(function (j) { return hover[j]; }),
          marker: Object.assign({}, tr.marker, {color: hits.map(colorOf)})
        });
      });
      return Plotly.react(gd, next, gd.layout);
    }

    function href(i) {
      if (options.paperHref) return options.paperHref.replace('__ID__', encodeURIComponent(d.ids[i]));
      return d.url[i] || '';
    }

    function showSelection(indices) {
      var seen = {}, sel = [];
      indices.forEach(function (j) { if (j !== undefined && !seen[j]) { seen[j] = 1; sel.push(j); } });
      sel.sort(function (a, b) {
        var sa = STATUS_ORDER[d.status[a]], sb = STATUS_ORDER[d.status[b]];
        sa = sa === undefined ? 9 : sa; sb = sb === undefined ? 9 : sb;
        return sa - sb || d.title[a].localeCompare(d.title[b]);
      });
      state.selected = sel;
      container.dataset.selected = String(sel.length);
      ui.list.textContent = '';
      ui.clear.hidden = !sel.length;
      ui.selcount.textContent = sel.length ? sel.length + (sel.length === 1 ? ' paper selected' : ' papers selected')
        : 'Select papers with Box select or Lasso to list them here.';
      var frag = document.createDocumentFragment();
      sel.slice(0, MAX_LISTED).forEach(function (j) {
        var li = node('li', 'atlasmap-item');
        var url = href(j);
        var a = node(url ? 'a' : 'span', 'atlasmap-title', d.title[j]);
        if (url) {
          a.href = url;
          if (!options.paperHref) { a.target = '_blank'; a.rel = 'noopener noreferrer'; }
        }
        li.appendChild(a);
        if (d.status[j]) {
          li.appendChild(document.createTextNode(' '));
          li.appendChild(node('span', 'atlasmap-badge ' + d.status[j].toLowerCase(), d.status[j]));
        }
        frag.appendChild(li);
      });
      if (sel.length > MAX_LISTED) frag.appendChild(node('li', 'atlasmap-more', '\u2026 and ' + (sel.length - MAX_LISTED) + ' more'));
      ui.list.appendChild(frag);
    }

    function clearSelection() {
      showSelection([]);
      return Plotly.restyle(gd, {selectedpoints: [null]}).then(function () {
        return Plotly.relayout(gd, {selections: []});
      });
    }

    function setDragmode(mode) {
      Object.keys(ui.buttons).forEach(function (m) { ui.buttons[m].classList.toggle('active', m === mode); });
      return Plotly.relayout(gd, {dragmode: mode});
    }

    return Plotly.newPlot(gd, traces, layout, config).then(function () {
      var fl = gd._fullLayout;
      state.full = {x: fl.xaxis.range.map(Number), y: fl.yaxis.range.map(Number)};
      gd.on('plotly_relayout', function (ev) {
        if (ev && ev.dragmode) Object.keys(ui.buttons).forEach(function (m) { ui.buttons[m].classList.toggle('active', m === ev.dragmode); });
        updateLabels();
      });
      gd.on('plotly_restyle', function (ev) { if (ev && ev[0] && 'visible' in ev[0]) updateLabels(); });
      gd.on('plotly_click', function (ev) {
        var pt = ev && ev.points && ev.points[0];
        if (!pt) return;
        var j = globalIndex(pt);
        if (j === undefined) return;
        var url = href(j);
        if (!url) return;
        if (options.paperHref) global.location.href = url;
        else global.open(url, '_blank', 'noopener');
      });
      gd.on('plotly_selected', function (ev) { showSelection(ev && ev.points ? ev.points.map(globalIndex) : []); });
      gd.on('plotly_deselect', function () { showSelection([]); });
      gd.on('plotly_clickannotation', function (ev) {
        var name = ev && ev.annotation && ev.annotation.name;
        if (!options.topicHref || !name) return;
        global.location.href = options.topicHref.replace('__ID__', encodeURIComponent(name.split(':')[1]));
      });
      var timer = null;
      ui.input.addEventListener('input', function () {
        clearTimeout(timer);
        timer = setTimeout(function () { search(ui.input.value); }, n > 5000 ? 200 : 60);
      });
      ui.input.addEventListener('keydown', function (e) {
        if (e.key === 'Enter') { e.preventDefault(); clearTimeout(timer); search(ui.input.value); }
      });
      Object.keys(ui.buttons).forEach(function (m) {
        ui.buttons[m].addEventListener('click', function () { setDragmode(m); });
      });
      ui.buttons.zoom.classList.add('active');
      ui.clear.addEventListener('click', clearSelection);
      return updateLabels();
    }).then(function () {
      var controller = {gd: gd, data: d, search: search, setDragmode: setDragmode, clearSelection: clearSelection,
                        updateLabels: updateLabels};
      container.atlasMap = controller;
      container.dataset.renderMs = String(Math.round(global.performance ? global.performance.now() : 0));
      container.dataset.ready = '1';
      container.dispatchEvent(new CustomEvent('atlasmap:ready', {detail: controller}));
      return controller;
    });
  }

  global.AtlasMap = {mount: mount};
})(window);
