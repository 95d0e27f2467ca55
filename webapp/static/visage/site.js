/* Visage: small helpers every page uses. Plain JS, no build step. */
"use strict";
window.Visage = (function () {
  function csrfToken() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.content : "";
  }
  function sleep(ms) { return new Promise(function (r) { setTimeout(r, ms); }); }
  /* Poll `tick` every `ms` while it returns true; slower while the tab is hidden. */
  function poll(tick, ms) {
    var stopped = false;
    (async function loop() {
      while (!stopped) {
        await sleep(document.hidden ? ms * 4 : ms);
        try { if ((await tick()) === false) { stopped = true; } } catch (e) { await sleep(ms * 2); }
      }
    })();
    return function () { stopped = true; };
  }
  /* Follow the signed-in user's job events (GET /api/v1/jobs/events, Server-Sent Events) from
     `after` (the stream id the page was rendered at, so nothing in between is missed): `onJob(event)`
     for each. Without EventSource, or after repeated errors, `fallback()` starts a slow poll instead.
     EventSource itself reconnects (with Last-Event-ID) when the server ends a stream after a while. */
  function follow(options) {
    var fellBack = false;
    function fallBack() { if (!fellBack) { fellBack = true; options.fallback(); } }
    if (!window.EventSource || !options.url) { fallBack(); return null; }
    var url = options.url + (options.after ? "?last_event_id=" + encodeURIComponent(options.after) : "");
    var source = new EventSource(url, { withCredentials: true });
    var failures = 0;
    source.addEventListener("open", function () { failures = 0; });
    source.addEventListener("job", function (event) { failures = 0; options.onJob(JSON.parse(event.data)); });
    source.addEventListener("reset", function () { if (options.onReset) options.onReset(); });
    source.addEventListener("error", function () {
      failures += 1;
      if (source.readyState === EventSource.CLOSED || failures >= 3) { source.close(); fallBack(); }
    });
    return source;
  }
  return { csrfToken: csrfToken, poll: poll, follow: follow };
})();

document.addEventListener("submit", function (event) {
  var form = event.target.closest("form[data-confirm]");
  if (form && !window.confirm(form.dataset.confirm)) { event.preventDefault(); }
});

document.addEventListener("click", function (event) {
  var button = event.target.closest("[data-copy]");
  if (!button) return;
  var input = document.querySelector(button.dataset.copy);
  input.select();
  (navigator.clipboard ? navigator.clipboard.writeText(input.value) : Promise.reject())
    .catch(function () { document.execCommand("copy"); })
    .finally(function () { button.textContent = gettext("Copied"); setTimeout(function () { button.textContent = gettext("Copy"); }, 2000); });
});

/* A picture that has a lighter version falls back to the full one when the light one is missing
   (gallery thumbnails of results stored before thumbnails existed). */
document.addEventListener("error", function (event) {
  var img = event.target;
  if (img.tagName === "IMG" && img.dataset.fallbackSrc && img.src !== img.dataset.fallbackSrc) {
    img.src = img.dataset.fallbackSrc;
  }
}, true);
