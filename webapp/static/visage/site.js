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
  return { csrfToken: csrfToken, poll: poll };
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
    .finally(function () { button.textContent = "Copied"; setTimeout(function () { button.textContent = "Copy"; }, 2000); });
});

/* A picture that has a lighter version falls back to the full one when the light one is missing
   (gallery thumbnails of results stored before thumbnails existed). */
document.addEventListener("error", function (event) {
  var img = event.target;
  if (img.tagName === "IMG" && img.dataset.fallbackSrc && img.src !== img.dataset.fallbackSrc) {
    img.src = img.dataset.fallbackSrc;
  }
}, true);
