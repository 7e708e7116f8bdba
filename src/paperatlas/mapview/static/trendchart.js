/* trendchart.js: topic-trend line charts of paperatlas, drawn with Plotly.js (SVG scatter lines, no WebGL).
 *
 * Shared by the web app (/trends and the topic pages) and the static site (trends.html). Needs the global `Plotly`
 * (plotly.min.js, bundled from the plotly PyPI package, never a CDN) loaded first.
 *
 * Draws every element with a data-trendchart attribute. Its data is the JSON of paperatlas.trends.chart_payload
 * in a child <script type="application/json" class="trendchart-data"> (data, not code: the pages' Content-Security-
 * Policy runs only the app's own script files):
 *   {title, years: [y...], totals: [papers per year...],
 *    series: [{id, label, direction, shares: [percent...], counts: [...], fit: [percent at first, last year],
 *              slope, ci: [low, high] (percentage points per year), slope_text (as the CLI prints it), text}]}
 * Each topic is a line of its yearly share (hover: the year, share, and its papers of the year's papers) with its
 * OLS fit as a dashed line of the same colour; the legend names the slope. When drawn, the element gets data-ready="1" and
 * data-series (number of topics drawn).
 */
(function () {
  'use strict';

  // d3's category10: distinct, print-safe colours for up to 10 lines (more repeat)
  var PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
                 '#bcbd22', '#17becf'];

  function esc(s) {
    return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  }

  function signed(v) {
    return (v >= 0 ? '+' : '') + v.toFixed(2);
  }

  function draw(el) {
    var script = el.querySelector('script.trendchart-data');
    var plot = el.querySelector('.trendchart-plot');
    if (!script || !plot || !window.Plotly) return;
    var d = JSON.parse(script.textContent);
    var first = d.years[0], last = d.years[d.years.length - 1];
    var traces = [];
    d.series.forEach(function (s, i) {
      var color = PALETTE[i % PALETTE.length];
      var name = esc(s.label) + ' (' + (s.slope_text || signed(s.slope)) + ' pp/yr)';
      traces.push({
        type: 'scatter', mode: 'lines+markers', x: d.years, y: s.shares, name: name, legendgroup: 'g' + i,
        line: {color: color, width: 2}, marker: {size: 4, color: color},
        customdata: s.counts.map(function (c, j) { return [c, d.totals[j]]; }),
        hovertemplate: '%{x}: %{y:.2f}% (%{customdata[0]} of %{customdata[1]} papers)<extra>' + esc(s.label) +
          '</extra>'
      });
      traces.push({
        type: 'scatter', mode: 'lines', x: [first, last], y: s.fit, legendgroup: 'g' + i, showlegend: false,
        line: {color: color, width: 1.5, dash: 'dash'}, hoverinfo: 'skip'
      });
    });
    var layout = {
      title: d.title ? {text: esc(d.title), font: {size: 15}} : undefined,
      margin: {l: 56, r: 12, t: d.title ? 40 : 12, b: 40},
      xaxis: {title: {text: 'year'}, dtick: last - first > 16 ? 5 : last - first > 8 ? 2 : 1, showgrid: false},
      yaxis: {title: {text: 'share of the year\'s papers (%)'}, rangemode: 'tozero', zeroline: true},
      showlegend: d.series.length > 1, legend: {orientation: 'h', y: -0.22, font: {size: 12}},
      hovermode: 'closest', paper_bgcolor: 'rgba(0,0,0,0)', plot_bgcolor: 'rgba(0,0,0,0)'
    };
    window.Plotly.newPlot(plot, traces, layout, {displaylogo: false, responsive: true,
      modeBarButtonsToRemove: ['select2d', 'lasso2d']}).then(function () {
      el.setAttribute('data-ready', '1');
      el.setAttribute('data-series', String(d.series.length));
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll('[data-trendchart]'), draw);
})();
