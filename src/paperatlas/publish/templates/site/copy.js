/* "Copy BibTeX" on a paper page: copies the entry shown under "BibTeX" (navigator.clipboard, else a hidden
 * textarea and execCommand, which also works from file://). */
(function () {
  "use strict";
  function fallback(text) {
    var ta = document.createElement("textarea");
    ta.value = text; ta.setAttribute("readonly", ""); ta.style.position = "fixed"; ta.style.opacity = "0";
    document.body.appendChild(ta); ta.select();
    try { document.execCommand("copy"); } catch (e) { /* the entry stays visible under "BibTeX" */ }
    document.body.removeChild(ta);
  }
  document.addEventListener("click", function (ev) {
    var b = ev.target.closest && ev.target.closest("button.copybib");
    if (!b) { return; }
    var text = document.getElementById(b.getAttribute("data-target")).textContent;
    var done = function () { b.textContent = "Copied"; b.className += " on"; };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { fallback(text); done(); });
    } else { fallback(text); done(); }
  });
})();
