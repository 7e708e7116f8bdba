/* Actions in place (no page reload): like, dislike and reading list on every paper row (form.acts), "More like
 * this" (a.more: the row's related papers, fetched from /api/related/ID), and "Copy BibTeX" on a paper page.
 * Without JavaScript the same forms post and come back to the page (the server redirects to `next`).
 * Served as a file: the app's Content-Security-Policy runs no inline script. */
(function () {
  'use strict';

  function setState(form, s) {
    var like = form.querySelector('button.like'), dislike = form.querySelector('button.dislike'),
        add = form.querySelector('button.add');
    if (like) {
      like.classList.toggle('on', s.rating > 0); like.value = s.rating > 0 ? 'unrate' : 'like';
      like.querySelector('span').textContent = s.rating > 0 ? 'Liked' : 'Like';
    }
    if (dislike) {
      dislike.classList.toggle('on', s.rating < 0); dislike.value = s.rating < 0 ? 'unrate' : 'dislike';
      dislike.querySelector('span').textContent = s.rating < 0 ? 'Disliked' : 'Dislike';
    }
    if (add) {
      var on = s.lists.indexOf('reading') >= 0;
      add.classList.toggle('on', on); add.value = on ? 'remove' : 'add';
      add.querySelector('span').textContent = on ? 'On reading list' : 'Reading list';
    }
  }

  document.addEventListener('submit', function (ev) {
    var form = ev.target;
    if (!form.classList || !form.classList.contains('acts')) return;
    ev.preventDefault();
    var btn = ev.submitter || form.querySelector('button:focus');
    var data = new FormData(form);
    if (btn && btn.name) data.set(btn.name, btn.value);
    form.classList.add('busy');
    fetch(form.getAttribute('action'), {method: 'POST', body: data, credentials: 'same-origin',
                        headers: {'Accept': 'application/json'}})
      .then(function (r) { if (!r.ok) throw new Error(r.status + ' ' + r.statusText); return r.json(); })
      .then(function (s) { setState(form, s); form.setAttribute('data-state', s.rating + ',' + s.lists.join('|')); })
      .catch(function (e) { form.setAttribute('data-error', String(e)); })
      .then(function () { form.classList.remove('busy'); });
  });

  document.addEventListener('click', function (ev) {
    var more = ev.target.closest && ev.target.closest('a.more[data-related]');
    if (more) {
      ev.preventDefault();
      var box = more.closest('li, article').querySelector('.morelike');
      if (!box) return;
      if (!box.hidden && box.childNodes.length) { box.hidden = true; return; }
      fetch(more.getAttribute('data-related'), {credentials: 'same-origin'})
        .then(function (r) { return r.json(); })
        .then(function (d) {
          box.textContent = '';
          var head = document.createElement('div'); head.className = 'morehead'; head.textContent = 'More like this:';
          var ol = document.createElement('ol');
          d.related.forEach(function (r) {
            var li = document.createElement('li'), a = document.createElement('a');
            a.href = r.href; a.textContent = r.title; li.appendChild(a);
            var why = document.createElement('span'); why.className = 'reason'; why.textContent = ' — ' + r.reason;
            li.appendChild(why); ol.appendChild(li);
          });
          box.appendChild(head); box.appendChild(ol); box.hidden = false;
        });
      return;
    }
    var copy = ev.target.closest && ev.target.closest('button.copybib');
    if (copy) {
      var text = document.getElementById(copy.getAttribute('data-target')).textContent;
      var done = function () { copy.textContent = 'Copied'; copy.classList.add('on'); };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, function () { fallback(text); done(); });
      } else { fallback(text); done(); }
    }
  });

  function fallback(text) {
    var ta = document.createElement('textarea');
    ta.value = text; ta.setAttribute('readonly', ''); ta.style.position = 'fixed'; ta.style.opacity = '0';
    document.body.appendChild(ta); ta.select();
    try { document.execCommand('copy'); } catch (e) { /* the BibTeX stays visible under "BibTeX" */ }
    document.body.removeChild(ta);
  }
})();
