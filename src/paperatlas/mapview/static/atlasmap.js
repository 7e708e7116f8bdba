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
 *     options.compact    a smaller map without the legend;
 *     options.markHref   (web app) a URL with __ID__ to POST reading-list actions to, with options.csrfToken:
 *                        the selection can then be saved as a named reading list (else only downloaded as CSV).
 *
 * Areas are drawn as regions (their outlines, under the points); labels are whole, wrapped and kept inside the
 * plot; zoomed in, points take their sub-topic's shade of the area colour. "Colour by" switches between area,
 * year, status and mean review rating. A box or lasso selection lists its papers and their top keyphrases, and can
 * be saved as a reading list or downloaded.
 *
 * The controller: {gd, data, search(query) -> Promise, setDragmode(mode), clearSelection(), updateLabels(),
 * colorBy(mode) -> Promise, select(indices)}.
 * The container records its state for scripts and tests: data-ready="1" after the first render (and
 * data-render-ms, milliseconds since navigation start), data-label-level ("area" or "topic"), data-matches (the
 * number of papers the search highlights, "" without a query) and data-selected (number of papers selected).
 */
(function (global) {
  'use strict';

  var WRAP_CHARS = 80;        // hover text is broken into lines of about this many characters
  var LABEL_LINE = 18;        // map labels are wrapped into lines of about this many characters (never cut)
  var TOP_KEYPHRASES = 8;     // the selection panel names this many of its papers' most frequent keyphrases
  var STATUS_COLORS = {Oral: '#d9480f', Spotlight: '#f59f00', Poster: '#1c7ed6'};
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

  /* #rrggbb mixed with white by t (0..1). */
  function tint(hex, t) {
    var c = parseInt(hex.slice(1), 16), r = c >> 16, g = (c >> 8) & 255, b = c & 255;
    var f = function (v) { return Math.round(v + (255 - v) * t); };
    return 'rgb(' + f(r) + ',' + f(g) + ',' + f(b) + ')';
  }
  function rgba(hex, a) {
    var c = parseInt(hex.slice(1), 16);
    return 'rgba(' + (c >> 16) + ',' + ((c >> 8) & 255) + ',' + (c & 255) + ',' + a + ')';
  }

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
    var colorSel = node('select', 'atlasmap-colorby');
    colorSel.setAttribute('aria-label', 'Colour the points by');
    bar.appendChild(input); bar.appendChild(count); bar.appendChild(colorSel); bar.appendChild(modes);
    var body = node('div', 'atlasmap-body');
    var plot = node('div', 'atlasmap-plot', 'Loading the map\u2026');
    var panel = node('aside', 'atlasmap-panel');
    var head = node('div', 'atlasmap-selhead');
    var selcount = node('span', 'atlasmap-selcount', 'Select papers with Box select or Lasso to list them here.');
    var clear = node('button', 'atlasmap-clear', 'Clear');
    clear.type = 'button';
    clear.hidden = true;
    head.appendChild(selcount); head.appendChild(clear);
    var kps = node('p', 'atlasmap-kps');
    var acts = node('div', 'atlasmap-acts');
    var listName = node('input', 'atlasmap-listname');
    listName.value = 'map selection';
    listName.setAttribute('aria-label', 'Reading list name');
    var save = node('button', 'atlasmap-save', 'Save as reading list');
    save.type = 'button';
    var csv = node('button', 'atlasmap-csv', 'Download CSV');
    csv.type = 'button';
    var saved = node('span', 'atlasmap-saved');
    acts.appendChild(listName); acts.appendChild(save); acts.appendChild(csv); acts.appendChild(saved);
    var list = node('ol', 'atlasmap-sel');
    panel.appendChild(head); panel.appendChild(kps); panel.appendChild(acts); panel.appendChild(list);
    panel.hidden = true;
    body.appendChild(plot); body.appendChild(panel);
    container.appendChild(bar); container.appendChild(body);
    return {input: input, count: count, buttons: buttons, plot: plot, selcount: selcount, clear: clear, list: list,
            panel: panel, kps: kps, listName: listName, save: save, csv: csv, saved: saved, colorSel: colorSel};
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
    function areaColor(i) { return d.area[i] >= 0 ? d.areas[d.area[i]].color : '#999999'; }
    // zoomed in, a point takes its sub-topic's shade of its area's colour (sub-topics of one area alternate)
    var shadeOfTopic = {}, seenInArea = {};
    d.topics.forEach(function (t, k) {
      var n0 = seenInArea[t.area] = (seenInArea[t.area] || 0) + 1;
      shadeOfTopic[k] = [0, 0.45, 0.25, 0.6, 0.12, 0.35][(n0 - 1) % 6];
    });
    function topicColor(i) {
      var base = areaColor(i);
      return d.topic[i] >= 0 && base.charAt(0) === '#' ? tint(base, shadeOfTopic[d.topic[i]] || 0) : base;
    }
    var modeNow = 'area', levelNow = 'area';
    function colorOf(i) {
      if (modeNow === 'status') return STATUS_COLORS[d.status[i]] || '#999999';
      return levelNow === 'topic' ? topicColor(i) : areaColor(i);
    }

    var members = [], traceArea = [], overlay = 0;
    function numeric(field) { return (d[field] || []).some(function (v) { return v != null; }); }
    var modesAvailable = [['area', 'Colour: area']];
    if (numeric('year') && new Set(d.year.filter(function (v) { return v != null; })).size > 1) modesAvailable.push(['year', 'Colour: year']);
    if (d.status.some(function (v) { return v; })) modesAvailable.push(['status', 'Colour: status']);
    if (numeric('rating')) modesAvailable.push(['rating', 'Colour: rating']);
    modesAvailable.forEach(function (m) { var o = node('option', null, m[1]); o.value = m[0]; ui.colorSel.appendChild(o); });
    ui.colorSel.hidden = modesAvailable.length < 2;

    /* The traces for a colour mode: area regions (under the points), the points, and the search overlay last. */
    function buildTraces(mode) {
      var traces = [];
      members = []; traceArea = [];
      (d.regions || []).forEach(function (r) {
        var a = d.areas[r.area];
        traces.push({type: 'scatter', mode: 'lines', x: r.x, y: r.y, fill: 'toself', hoverinfo: 'skip',
                     name: 'region:' + a.id, legendgroup: 'area' + r.area, showlegend: false,
                     line: {color: rgba(a.color, mode === 'area' ? 0.55 : 0.3), width: 1, shape: 'spline'},
                     fillcolor: rgba(a.color, mode === 'area' ? 0.09 : 0.04)});
        members.push([]); traceArea.push(null);
      });
      function points(idx, extra) {
        return Object.assign({type: glType, mode: 'markers',
          x: idx.map(function (j) { return d.x[j]; }), y: idx.map(function (j) { return d.y[j]; }),
          hovertext: idx.map(function (j) { return hover[j]; }), hovertemplate: '%{hovertext}<extra></extra>'}, extra);
      }
      var groups = {}, i2;
      if (mode === 'area') {
        for (i2 = 0; i2 < n; i2++) (groups[d.area[i2]] = groups[d.area[i2]] || []).push(i2);
        var order = [];
        d.areas.forEach(function (_a, k) { if (groups[k]) order.push(k); });
        if (groups[-1]) order.push(-1);
        order.forEach(function (a) {
          var idx = groups[a];
          traces.push(points(idx, {
            name: a >= 0 ? d.areas[a].label + ' (' + idx.length + ')' : 'No topic (' + idx.length + ')',
            legendgroup: 'area' + a,
            marker: {color: idx.map(colorOf), opacity: 0.85, size: idx.map(function (j) { return d.low[j] ? 4 : 6; })}}));
          members.push(idx); traceArea.push(a);
        });
      } else if (mode === 'status') {
        for (i2 = 0; i2 < n; i2++) { var st = STATUS_COLORS[d.status[i2]] ? d.status[i2] : 'Other'; (groups[st] = groups[st] || []).push(i2); }
        ['Oral', 'Spotlight', 'Poster', 'Other'].forEach(function (st) {
          if (!groups[st]) return;
          var idx = groups[st];
          traces.push(points(idx, {name: st + ' (' + idx.length + ')',
            marker: {color: STATUS_COLORS[st] || '#aaaaaa', opacity: 0.85, size: st === 'Poster' || st === 'Other' ? 5 : 8}}));
          members.push(idx); traceArea.push(-2);
        });
      } else {  // year or rating: one colour scale with its colour bar; papers without a value in grey
        var have = [], none = [];
        for (i2 = 0; i2 < n; i2++) (d[mode][i2] != null ? have : none).push(i2);
        if (none.length) {
          traces.push(points(none, {name: 'no ' + mode + ' (' + none.length + ')', marker: {color: '#c8c8c8', size: 4, opacity: 0.6}}));
          members.push(none); traceArea.push(-2);
        }
        traces.push(points(have, {name: mode + ' (' + have.length + ')', showlegend: false,
          marker: {color: have.map(function (j) { return d[mode][j]; }), size: 6, opacity: 0.9,
                   colorscale: mode === 'year' ? 'Viridis' : 'RdYlBu', reversescale: mode === 'rating',
                   colorbar: {title: {text: mode === 'year' ? 'Year' : 'Mean rating'}, thickness: 12, len: 0.6}}}));
        members.push(have); traceArea.push(-2);
      }
      overlay = traces.length;
      members.push([]); traceArea.push(null);
      traces.push({type: glType, mode: 'markers', name: 'matches', showlegend: false, x: [], y: [], hovertext: [],
                   hovertemplate: '%{hovertext}<extra></extra>',
                   marker: {size: 10, color: [], opacity: 1, line: {color: '#111111', width: 1.2}}});
      return traces;
    }
    var traces = buildTraces('area');

    var layout = {
      margin: {l: 6, r: 6, t: 6, b: 6}, autosize: true,
      xaxis: {visible: false}, yaxis: {visible: false},
      dragmode: 'zoom', hovermode: 'closest', clickmode: 'event',
      showlegend: !options.compact && d.areas.length > 1,
      // the legend sits under the plot, never on it
      legend: {itemsizing: 'constant', font: {size: 11}, orientation: 'h', x: 0, xanchor: 'left', y: -0.01,
               yanchor: 'top', bgcolor: 'rgba(255,255,255,0)'},
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
        var fs = level === 'area' ? 13 : 11;
        var lines = wrap(c.label, LABEL_LINE).split('<br>');
        var longest = Math.max.apply(null, lines.map(function (l) { return l.replace(/&[a-z]+;/g, '_').length; }));
        var bw = longest * fs * 0.6 + 12, bh = lines.length * (fs + 3) + 8;
        // keep the whole label inside the plot: move its anchor in from the edges
        var px = Math.min(Math.max((c.x - x0) / (x1 - x0) * w, bw / 2 + 4), w - bw / 2 - 4);
        var py = Math.min(Math.max((y1 - c.y) / (y1 - y0) * h, bh / 2 + 4), h - bh / 2 - 4);
        var box = [px - bw / 2, py - bh / 2, px + bw / 2, py + bh / 2];
        for (var b = 0; b < boxes.length; b++) {
          var o = boxes[b];
          if (box[0] < o[2] && o[0] < box[2] && box[1] < o[3] && o[1] < box[3]) return;  // overlaps a bigger one
        }
        boxes.push(box);
        var area = areaIdx >= 0 ? d.areas[areaIdx] : null;
        var text = lines.join('<br>');
        anns.push({x: x0 + px / w * (x1 - x0), y: y1 - py / h * (y1 - y0), xref: 'x', yref: 'y', showarrow: false,
                   text: level === 'area' ? '<b>' + text + '</b>' : text,
                   hovertext: esc(c.label + ' \u00b7 ' + c.size + ' papers'),
                   font: {size: fs, color: '#111111'}, bgcolor: 'rgba(255,255,255,0.85)',
                   bordercolor: area ? area.color : '#999999', borderwidth: level === 'area' ? 1.5 : 1, borderpad: 2,
                   name: level + ':' + c.id, captureevents: !!options.topicHref});
      });
      var key = level + '|' + anns.map(function (a) { return a.name; }).join(',');
      var after = function () { container.dataset.labelLevel = level; };  // once the labels and shades are drawn
      var recolor = null;
      if (level !== levelNow) {
        levelNow = level;
        if (modeNow === 'area') {  // sub-topic shades zoomed in, area colours zoomed out
          var ks = [], cols = [];
          members.forEach(function (idx, k) { if (k < overlay && idx.length) { ks.push(k); cols.push(idx.map(colorOf)); } });
          recolor = Plotly.restyle(gd, {'marker.color': cols}, ks);
        }
      }
      if (key === state.labelKey) return Promise.resolve(recolor).then(after);
      state.labelKey = key;
      return Promise.resolve(recolor).then(function () { return Plotly.relayout(gd, {annotations: anns}); }).then(after);
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
      ui.panel.hidden = !sel.length;
      ui.saved.textContent = '';
      // the selection's most frequent keyphrases: what this part of the map is about
      var freq = {};
      sel.forEach(function (j) {
        String(d.keyphrases[j] || '').split('; ').forEach(function (k) { if (k) freq[k] = (freq[k] || 0) + 1; });
      });
      // ranked by how much more often the selection has them than the whole map (count x idf), so "neural networks"
      // does not name every selection
      if (!state.kpTotal) {
        state.kpTotal = {};
        for (var j0 = 0; j0 < n; j0++) {
          String(d.keyphrases[j0] || '').split('; ').forEach(function (k) { if (k) state.kpTotal[k] = (state.kpTotal[k] || 0) + 1; });
        }
      }
      var weight = function (k) { return freq[k] * Math.log(n / state.kpTotal[k]); };
      var top = Object.keys(freq).filter(function (k) { return freq[k] > 1 || sel.length < 3; })
        .sort(function (a, b) { return weight(b) - weight(a) || a.localeCompare(b); }).slice(0, TOP_KEYPHRASES);
      ui.kps.textContent = '';
      if (top.length) {
        ui.kps.appendChild(node('b', null, 'Top keyphrases: '));
        top.forEach(function (k, t) {
          if (t) ui.kps.appendChild(document.createTextNode(' \u00b7 '));
          var span = node('span', 'atlasmap-kp', k);
          span.appendChild(node('span', 'atlasmap-kpn', ' ' + freq[k]));
          ui.kps.appendChild(span);
        });
      }
      container.dataset.topKeyphrases = top.join('|');
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

    function saveSelection() {  // the web app: put every selected paper on a reading list, one POST each
      var name = ui.listName.value.trim() || 'map selection', ids = state.selected.map(function (j) { return d.ids[j]; });
      var done = 0;
      ui.save.disabled = true;
      var chain = Promise.resolve();
      ids.forEach(function (id) {
        chain = chain.then(function () {
          var body = new FormData();
          body.set('action', 'add'); body.set('list', name); body.set('csrf_token', options.csrfToken || '');
          return fetch(options.markHref.replace('__ID__', encodeURIComponent(id)), {method: 'POST', body: body,
            credentials: 'same-origin', headers: {'Accept': 'application/json'}}).then(function (r) {
            if (!r.ok) throw new Error('HTTP ' + r.status);
            done += 1;
            ui.saved.textContent = 'Saving\u2026 ' + done + ' of ' + ids.length;
          });
        });
      });
      return chain.then(function () {
        ui.saved.textContent = 'Saved ' + done + ' papers to \u201c' + name + '\u201d';
        container.dataset.saved = name + ':' + done;
      }, function (e) { ui.saved.textContent = 'Could not save: ' + e.message; })
        .then(function () { ui.save.disabled = false; });
    }

    function selectionCsv() {
      var q = function (v) { return '"' + String(v == null ? '' : v).replace(/"/g, '""') + '"'; };
      var rows = [['id', 'title', 'status', 'authors', 'keyphrases', 'url'].join(',')];
      state.selected.forEach(function (j) {
        rows.push([d.ids[j], d.title[j], d.status[j], d.authors[j], d.keyphrases[j], href(j)].map(q).join(','));
      });
      return rows.join('\r\n') + '\r\n';
    }

    function downloadCsv() {
      var a = node('a');
      a.href = URL.createObjectURL(new Blob([selectionCsv()], {type: 'text/csv'}));
      a.download = 'map-selection.csv';
      document.body.appendChild(a); a.click(); document.body.removeChild(a);
    }

    function colorBy(mode) {
      modeNow = mode;
      ui.colorSel.value = mode;
      container.dataset.colorBy = mode;
      state.labelKey = null;
      var next = buildTraces(mode);
      return Plotly.react(gd, next, gd.layout).then(function () {
        return state.matches.length || ui.input.value.trim() ? search(ui.input.value) : null;
      }).then(updateLabels);
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
      ui.csv.addEventListener('click', downloadCsv);
      if (options.markHref) ui.save.addEventListener('click', saveSelection);
      else { ui.save.hidden = true; ui.listName.hidden = true; }
      ui.colorSel.addEventListener('change', function () { colorBy(ui.colorSel.value); });
      container.dataset.colorBy = 'area';
      return updateLabels();
    }).then(function () {
      var controller = {gd: gd, data: d, search: search, setDragmode: setDragmode, clearSelection: clearSelection,
                        updateLabels: updateLabels, colorBy: colorBy, select: showSelection,
                        selectionCsv: selectionCsv, saveSelection: saveSelection};
      container.atlasMap = controller;
      container.dataset.renderMs = String(Math.round(global.performance ? global.performance.now() : 0));
      container.dataset.ready = '1';
      container.dispatchEvent(new CustomEvent('atlasmap:ready', {detail: controller}));
      return controller;
    });
  }

  global.AtlasMap = {mount: mount};
})(window);
