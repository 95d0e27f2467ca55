/* The job page: follow an unfinished swap, then reload to show the result; drive the before/after slider. */
"use strict";
(function () {
  var live = document.getElementById("job-live");
  if (live) {
    var bar = document.getElementById("job-progress");
    var status = document.getElementById("job-status");
    Visage.poll(async function () {
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
