/* The job page: follow an unfinished swap, then reload to show the result; drive the before/after slider. */
"use strict";
(function () {
  var live = document.getElementById("job-live");
  if (live) {
    var bar = document.getElementById("job-progress");
    var status = document.getElementById("job-status");
    var badge = document.getElementById("state-badge");
    Visage.poll(async function () {
      var response = await fetch(live.dataset.statusUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (response.status === 404) { window.location.reload(); return false; }
      if (!response.ok) throw new Error("status " + response.status);
      var job = await response.json();
      bar.setAttribute("aria-valuenow", job.progress);
      bar.querySelector(".progress-bar").style.width = job.progress + "%";
      if (job.status_text) status.textContent = job.status_text;
      if (job.label && badge) { badge.textContent = job.label; badge.className = "badge badge-" + job.state; }
      if (job.terminal) {
        bar.querySelector(".progress-bar").style.width = "100%";
        setTimeout(function () { window.location.reload(); }, 400);
        return false;
      }
      return true;
    }, 1200);
  }

  var compare = document.getElementById("compare");
  var range = document.getElementById("compare-range");
  if (compare && range) {
    var update = function () {
      compare.style.setProperty("--pos", range.value + "%");
      range.setAttribute("aria-valuetext", range.value + "% original photo shown");
    };
    range.addEventListener("input", update);
    update();
  }
})();
