// Review page behaviour (reviews.md §18.3): lazily loaded artifact viewers and fragment targets.
(function () {
  "use strict";

  function message(text, className) {
    var node = document.createElement("p");
    node.className = className;
    node.textContent = text;
    return node;
  }

  function contentContainer(details) {
    var target = details.querySelector(".artifact-viewer-content");
    if (!target) {
      target = document.createElement("div");
      target.className = "artifact-viewer-content";
      details.appendChild(target);
    }
    return target;
  }

  function artifactPath(details) {
    var url = details.getAttribute("data-artifact-url");
    var path = details.getAttribute("data-artifact-path");
    return path || decodeURIComponent(url.slice(url.indexOf("/artifacts/") + "/artifacts/".length));
  }

  function loadViewer(details) {
    if (details.dataset.state === "loading" || details.dataset.state === "loaded") return;
    var target = contentContainer(details);
    var path = artifactPath(details);
    details.dataset.state = "loading";
    // Viewers written by other sections may carry a static loading line; ours replaces it.
    details.querySelectorAll(":scope > .artifact-loading").forEach(function (node) { node.remove(); });
    target.replaceChildren(message("Loading saved evidence…", "loading"));
    fetch(details.getAttribute("data-artifact-url"), { credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error(String(response.status));
        return response.text();
      })
      .then(function (text) {
        target.replaceChildren(window.AtlasTraceViewers.renderArtifact(path, text));
        details.dataset.state = "loaded";
      })
      .catch(function (error) {
        var status = /^\d+$/.test(error.message) ? error.message : "network error";
        target.replaceChildren(message("Could not load this artifact (" + status + ").", "load-error"));
        // A later opening tries again.
        details.dataset.state = "failed";
      });
  }

  function onToggle(event) {
    var details = event.target;
    if (details.open && details.matches && details.matches("details.artifact-viewer")) {
      loadViewer(details);
    }
  }

  function revealFragment() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (!target) return;
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    target.scrollIntoView({ block: "start" });
  }

  // toggle does not bubble; listen in the capture phase for every viewer, including ones added later.
  document.addEventListener("toggle", onToggle, true);
  window.addEventListener("hashchange", revealFragment);
  document.querySelectorAll("details.artifact-viewer[open]").forEach(loadViewer);
  revealFragment();
})();
