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
    // events: refresh its status line now and then while it waits.
    document.body.dataset.jobState = live.dataset.jobState;
    Visage.poll(async function () {
      if (document.body.dataset.jobState === "queued") await refreshNow();
      return true;  // stops with the page: a finished job reloads it
    }, 15000);
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
  }
})();
