/* The dashboard: re-render the cards of unfinished swaps every 1.5 s until they finish. */
"use strict";
(function () {
  var grid = document.getElementById("jobs");
  if (!grid) return;
  var live = document.getElementById("live");
  var words = { succeeded: "is done", failed: "failed", rejected: "was rejected", canceled: "was canceled" };

  function watched() {
    return Array.prototype.map.call(grid.querySelectorAll('.job-card[data-terminal="false"]'), function (c) { return c.dataset.jobId; });
  }

  async function tick() {
    var ids = watched();
    if (!ids.length) return false;
    var response = await fetch(grid.dataset.statusUrl + "?ids=" + ids.join(","), {
      headers: { Accept: "application/json" }, credentials: "same-origin",
    });
    if (!response.ok) throw new Error("status " + response.status);
    var body = await response.json();
    body.jobs.forEach(function (job) {
      var card = document.getElementById("job-" + job.id);
      if (!card) return;
      if (card.dataset.state === job.state) {
        // Same state: move the bar and the words in place (keeps the bar's transition smooth).
        var fresh = document.createElement("div");
        fresh.innerHTML = job.html;
        var bar = card.querySelector(".progress"), newBar = fresh.querySelector(".progress");
        if (bar && newBar) {
          bar.setAttribute("aria-valuenow", job.progress);
          bar.querySelector(".progress-bar").style.width = job.progress + "%";
        }
        var status = card.querySelector('[data-role="status"]'), newStatus = fresh.querySelector('[data-role="status"]');
        if (status && newStatus) status.textContent = newStatus.textContent;
        return;
      }
      card.outerHTML = job.html;
      if (job.terminal && live) {
        live.textContent = "A swap " + (words[job.state] || job.state) + ".";
      }
    });
    return watched().length > 0;
  }

  if (watched().length) Visage.poll(tick, 1500);
})();
