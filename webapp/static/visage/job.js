/* The job page: follow an unfinished swap live (its events over SSE; a slow poll only without
   EventSource), then reload to show the result; drive the before/after slider. */
"use strict";
(function () {
  var live = document.getElementById("job-live");
  if (live) {
    var bar = document.getElementById("job-progress");
    var status = document.getElementById("job-status");
    var refresh = async function () {
      var response = await fetch(live.dataset.statusUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (response.status === 404) { window.location.reload(); return false; }
      if (!response.ok) throw new Error("status " + response.status);
      var job = await response.json();
      bar.setAttribute("aria-valuenow", job.progress);
      bar.querySelector(".progress-bar").style.width = job.progress + "%";
      // One source for every element that says where the job stands (header badge, Details card, status line).
      status.textContent = job.status_text || "";
      document.querySelectorAll("[data-live]").forEach(function (el) {
        if (el.dataset.live === "badge") el.className = "badge badge-" + job.state;
        el.textContent = job.label;
      });
      document.body.dataset.jobState = job.state;
      document.body.dataset.warming = job.warming_up ? "1" : "";
      if (job.terminal) {
        bar.querySelector(".progress-bar").style.width = "100%";
        setTimeout(function () { window.location.reload(); }, 400);
        return false;
      }
      return true;
    };
    var busy = false, again = false;
    var refreshNow = async function () {  // one status fetch at a time; events meanwhile fold into one more
      if (busy) { again = true; return; }
      busy = true;
      try {
        do { again = false; if ((await refresh()) === false) { source && source.close(); return; } } while (again);
      } catch (e) { /* the next event or the fallback poll tries again */ } finally { busy = false; }
    };
    var source = Visage.follow({
      url: live.dataset.eventsUrl,
      after: live.dataset.eventsAfter,
      onJob: function (event) { if (event.id === live.dataset.jobId) refreshNow(); },
      onReset: refreshNow,
      fallback: function () { Visage.poll(refresh, 5000); },
    });
    // A queued job's place in line moves with other people's jobs, which are not this user's
    // events: refresh its status line now and then while it waits; every few seconds while the
    // workers are still starting (the wait it says counts down, and ends without an event).
    document.body.dataset.jobState = live.dataset.jobState;
    document.body.dataset.warming = live.dataset.warming;
    var lastQueuedRefresh = Date.now();
    Visage.poll(async function () {
      var queuedDue = document.body.dataset.jobState === "queued" && Date.now() - lastQueuedRefresh >= 15000;
      if (document.body.dataset.warming || queuedDue) {
        lastQueuedRefresh = Date.now();
        await refreshNow();
      }
      return true;  // stops with the page: a finished job reloads it
    }, 3000);
  }

  // The share link's Copy button: the clipboard where allowed, else the field stays selected to copy by hand.
  var shareField = document.querySelector("[data-select-on-focus]");
  if (shareField) {
    shareField.addEventListener("focus", function () { shareField.select(); });
  }
  var copy = document.getElementById("share-copy");
  if (copy) {
    copy.addEventListener("click", async function () {
      var field = document.getElementById(copy.dataset.copyTarget);
      var said = document.getElementById("share-copied");
      field.select();
      try {
        await navigator.clipboard.writeText(field.value);
        said.textContent = gettext("Copied the link.");
      } catch (e) {
        said.textContent = gettext("Press Ctrl+C (⌘C) to copy the selected link.");
      }
    });
  }

  var compare = document.getElementById("compare");
  var range = document.getElementById("compare-range");
  if (compare && range) {
    var update = function () {
      compare.style.setProperty("--pos", range.value + "%");
      range.setAttribute("aria-valuetext", range.value + "% " + gettext("original photo shown"));
    };
    range.addEventListener("input", update);
    update();
    // The line opens on the face; on a narrow screen it moves left (never off the face) until the
    // swapped side has room for its labels, so the "AI-generated" pill is shown whole on that side.
    var roomForLabels = function () {
      var side = compare.querySelector(".compare-side-after");
      if (!side || !compare.clientWidth) return;
      var style = getComputedStyle(side);
      var need = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight) +
        Math.max.apply(null, Array.prototype.map.call(side.children, function (el) { return el.offsetWidth; }));
      var most = Math.floor(100 * (1 - need / compare.clientWidth));
      var face = compare.dataset.faceBox ? compare.dataset.faceBox.split(",").map(Number) : null;
      var least = face ? Math.ceil(face[0]) : 0;
      if (Number(range.value) > most) {
        range.value = Math.max(most, least);
        update();
      }
    };
    var after = document.getElementById("result-image");
    if (after && !after.complete) after.addEventListener("load", roomForLabels, { once: true });
    else roomForLabels();
  }
})();
