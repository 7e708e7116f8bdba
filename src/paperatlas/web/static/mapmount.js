/* Mounts the interactive map (mapview/static/atlasmap.js) on every element with a data-atlasmap attribute.
 * Its options come from data-* attributes written by web/templates/_map.html (no inline script: the app's
 * Content-Security-Policy runs only its own script files):
 *   data-data-url     the map payload (/api/map)
 *   data-paper-href   a paper's URL with __ID__ for its id
 *   data-topic-href   a topic's URL with __ID__ for its id
 *   data-compact      present: the compact overview map
 *   data-mark-href    a paper's reading-list action URL with __ID__ (saving a selection as a list)
 *   data-csrf         the session's CSRF token for those POSTs
 */
(function () {
  'use strict';
  var els = document.querySelectorAll('[data-atlasmap]');
  Array.prototype.forEach.call(els, function (el) {
    window.AtlasMap.mount(el, {
      dataUrl: el.getAttribute('data-data-url'),
      paperHref: el.getAttribute('data-paper-href'),
      topicHref: el.getAttribute('data-topic-href'),
      compact: el.hasAttribute('data-compact'),
      markHref: el.getAttribute('data-mark-href') || undefined,
      csrfToken: el.getAttribute('data-csrf') || undefined
    });
  });
})();
