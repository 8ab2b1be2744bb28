// Difficulty sections of the review page (difficulty.md §14): lazily materialised run settings and
// attempts, and earlier reports fetched through the difficulty API. Artifact viewers and the
// #difficulty fragment are handled by static/reviews/review.js.
(function () {
  "use strict";

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function failure(container, status) {
    container.textContent = "Could not load this artifact (" + status + ").";
  }

  function fetchJson(url) {
    return fetch(url, { headers: { Accept: "application/json" } }).then(function (response) {
      if (!response.ok) throw response.status;
      return response.json();
    });
  }

  function definitionList(rows) {
    var list = element("dl", "difficulty-settings");
    rows.forEach(function (row) {
      if (row[1] === undefined || row[1] === null || row[1] === "") return;
      list.appendChild(element("dt", null, row[0]));
      var value = typeof row[1] === "object" ? JSON.stringify(row[1], null, 2) : row[1];
      var dd = element("dd");
      dd.appendChild(element("pre", null, value));
      list.appendChild(dd);
    });
    return list;
  }

  // §14.3.2: the applied settings recorded in the arm's run identity (difficulty.md §4.1).
  function renderRunManifest(container) {
    fetchJson(container.getAttribute("data-difficulty-run-manifest")).then(function (run) {
      var config = run.config || {};
      var model = config.model || {};
      var runtime = config.runtime || {};
      var rows = [
        ["Total context window", model.context_window],
        ["Context budget", model.context_budget],
        runtime.worker_timeout !== undefined
          ? ["Harbor execution · worker timeout", runtime.worker_timeout]
          : ["Request timeout", model.timeout],
        ["Agent timeout", runtime.agent_timeout],
        ["Maximum turns", runtime.max_turns],
        ["Native execution identity", run.marinskyrl || run.harbor],
        ["Implementation", run.implementation],
        ["Task sample SHA-256", run.tasks_sha256],
      ];
      if (run.harbor || runtime.harbor) {
        rows.push(["Applied Harbor agent, environment and verifier settings", runtime.harbor || run.harbor]);
      }
      if (run.record_kind === "reconstructed_execution_settings") {
        rows.push(["Reconstructed settings", run.note]);
      }
      container.replaceWith(definitionList(rows));
    }, function (status) { failure(container, status); });
  }

  function materialise(details) {
    if (details.dataset.difficultyLoaded) return;
    details.dataset.difficultyLoaded = "1";
    var template = details.querySelector(":scope > template");
    var loading = details.querySelector(":scope > .difficulty-loading");
    if (template) details.appendChild(template.content.cloneNode(true));
    if (loading) loading.remove();
    details.querySelectorAll("[data-difficulty-run-manifest]").forEach(renderRunManifest);
    details.dispatchEvent(new CustomEvent("atlas:content-added", { bubbles: true }));
  }

  function percent(model) {
    if (!model.verified) return null;
    return Math.min(100, Math.max(0, (100 * model.solved) / model.verified));
  }

  // §14.6: an archived report, always historical, with its actual model names.
  function renderHistory(details) {
    if (details.dataset.difficultyLoaded) return;
    details.dataset.difficultyLoaded = "1";
    var loading = details.querySelector(":scope > .difficulty-loading");
    fetchJson(details.getAttribute("data-difficulty-summary-url")).then(function (summary) {
      var chart = element("div", "difficulty-chart compact");
      chart.appendChild(element("span", "difficulty-chip", "Historical")).title = summary.status_note || "";
      (summary.models || []).forEach(function (model) {
        var name = model.model || model.display_name || "Native verifier recheck";
        var row = element("div", "difficulty-bar-row");
        row.title = name + " · " + model.solved + "/" + model.verified + " solved";
        row.appendChild(element("span", "difficulty-bar-label", name));
        var width = percent(model);
        if (width !== null) {
          var track = element("span", "difficulty-bar-track");
          var bar = element("span", "difficulty-bar bar-" + (model.followup_id ? "followup" : model.size));
          bar.style.width = width.toFixed(2) + "%";
          track.appendChild(bar);
          row.appendChild(track);
          row.appendChild(element("span", "difficulty-bar-score", Math.floor(width + 0.5) + "% · " + model.solved + "/" + model.verified));
        } else {
          row.appendChild(element("span", "difficulty-bar-score", "No scores"));
        }
        chart.appendChild(row);
      });
      if (loading) loading.replaceWith(chart);
    }, function (status) { if (loading) failure(loading, status); });
  }

  document.addEventListener("toggle", function (event) {
    var details = event.target;
    if (!(details instanceof HTMLDetailsElement) || !details.open) return;
    if (details.hasAttribute("data-difficulty-template")) materialise(details);
    if (details.hasAttribute("data-difficulty-summary-url")) renderHistory(details);
  }, true);

})();
