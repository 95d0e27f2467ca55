/* The gallery's one live source: on each of the user's job events (SSE, GET /api/v1/jobs/events) ask
   the server for the unfinished cards re-rendered, the jobs created since the newest card (another
   tab, the API), and the cards that are gone. Without EventSource, or when it keeps failing, the
   same request runs on a slow timer instead. */
"use strict";
(function () {
  var grid = document.getElementById("jobs");
  if (!grid) return;
  var live = document.getElementById("live");
  var empty = document.getElementById("empty");
  var words = {
    succeeded: gettext("A swap is done."), failed: gettext("A swap failed."),
    rejected: gettext("A swap was rejected."), canceled: gettext("A swap was canceled."),
  };
  var followNew = grid.dataset.liveNew === "true";
  // "New" means created after the newest card shown, or (no card yet) after the page was rendered,
  // both by the server's clock.
  var since = newestCard() || grid.dataset.now;

  function newestCard() {
    var first = grid.querySelector(".job-card time[datetime]");
    return first ? first.getAttribute("datetime") : null;
  }
  function watched() {
    return Array.prototype.map.call(grid.querySelectorAll('.job-card[data-terminal="false"]'), function (c) { return c.dataset.jobId; });
  }
  function fromHtml(html) {
    var holder = document.createElement("div");
    holder.innerHTML = html;
    return holder.firstElementChild;
  }

  async function tick() {
    var ids = watched();
    var query = "ids=" + ids.join(",");
    if (followNew) query += "&since=" + encodeURIComponent(since) + (grid.dataset.filterQuery ? "&" + grid.dataset.filterQuery : "");
    if (!ids.length && !followNew) return false;
    var response = await fetch(grid.dataset.statusUrl + "?" + query, {
      headers: { Accept: "application/json" }, credentials: "same-origin",
    });
    if (!response.ok) throw new Error("status " + response.status);
    var body = await response.json();
    body.jobs.forEach(function (job) {
      var card = document.getElementById("job-" + job.id);
      if (!card) return;
      if (card.dataset.state === job.state) {
        // Same state: move the bar and the words in place (keeps the bar's transition smooth).
        var fresh = fromHtml(job.html);
        var bar = card.querySelector(".progress");
        if (bar && fresh.querySelector(".progress")) {
          bar.setAttribute("aria-valuenow", job.progress);
          bar.querySelector(".progress-bar").style.width = job.progress + "%";
        }
        var status = card.querySelector('[data-role="status"]'), newStatus = fresh.querySelector('[data-role="status"]');
        if (status && newStatus) status.textContent = newStatus.textContent;
        return;
      }
      card.outerHTML = job.html;
      if (job.terminal && live) live.textContent = words[job.state] || interpolate(gettext("A swap is %(state)s."), { state: job.state }, true);
    });
    (body.gone || []).forEach(function (id) {
      var card = document.getElementById("job-" + id);
      if (card) card.remove();
    });
    // Oldest first, each put at the top: the newest ends up first.
    (body.new || []).slice().reverse().forEach(function (job) {
      if (document.getElementById("job-" + job.id)) return;
      grid.insertBefore(fromHtml(job.html), grid.firstElementChild);
      if (job.created_at > since) since = job.created_at;
      if (live) live.textContent = gettext("A new swap was added.");
    });
    var any = !!grid.querySelector(".job-card");
    grid.hidden = !any;
    if (empty) empty.hidden = any;
    return true;
  }

  // One refresh at a time; events that arrive meanwhile fold into one more.
  var busy = false, again = false;
  async function refreshNow() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      do { again = false; await tick(); } while (again);
    } catch (e) { /* the next event (or the fallback poll) tries again */ } finally { busy = false; }
  }

  Visage.follow({
    url: grid.dataset.eventsUrl,
    after: grid.dataset.eventsAfter,
    onJob: function (event) {
      var card = document.getElementById("job-" + event.id);
      if (event.deleted) {
        if (card) card.remove();
        var any = !!grid.querySelector(".job-card");
        grid.hidden = !any;
        if (empty) empty.hidden = any;
        return;
      }
      if (card || followNew) refreshNow();
    },
    onReset: refreshNow,
    // The slow fallback: 5 s while a swap is going (15 s otherwise); a hidden tab polls less.
    fallback: function () {
      (async function loop() {
        var stop = false;
        while (!stop) {
          await new Promise(function (r) { setTimeout(r, (watched().length ? 5000 : 15000) * (document.hidden ? 4 : 1)); });
          try { stop = (await tick()) === false; } catch (e) { await new Promise(function (r) { setTimeout(r, 5000); }); }
        }
      })();
    },
  });

  // Video cards: a short muted preview while hovered or focused.
  grid.addEventListener("pointerover", function (e) { preview(e.target.closest(".job-thumb"), true); });
  grid.addEventListener("pointerout", function (e) { preview(e.target.closest(".job-thumb"), false); });
  function preview(thumb, on) {
    var video = thumb && thumb.querySelector("video.thumb-preview");
    if (!video) return;
    if (on) {
      if (!video.src) video.src = video.dataset.src;
      thumb.classList.add("is-previewing");
      video.play().catch(function () {});
    } else {
      thumb.classList.remove("is-previewing");
      video.pause();
    }
  }
})();
