// Review page behaviour (reviews.md §18.3): lazily loaded artifact viewers, sections whose contents
// load when they open (each task's reviews, the saved evidence index) and fragment targets.
(function () {
  "use strict";

  // What the server answers for a section's contents only (reviews/pages/views.py).
  var REGION_HEADER = "X-Atlas-Region";
  var FRAGMENT = "fragment";

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

  function failureStatus(error) {
    return /^\d+$/.test(error.message) ? error.message : "network error";
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
        target.replaceChildren(
          message("Could not load this artifact (" + failureStatus(error) + ").", "load-error")
        );
        // A later opening tries again.
        details.dataset.state = "failed";
      });
  }

  // A section whose contents load on its first opening: its body holds a link to the same contents
  // as a page of their own (what a reader without scripts follows), replaced by the fragment the
  // server renders for that link. Resolves to whether the contents are in place.
  var pending = new WeakMap();

  function loadSection(details) {
    if (details.dataset.state === "loaded") return Promise.resolve(true);
    if (pending.has(details)) return pending.get(details);
    var body = details.querySelector(":scope > .fragment-body");
    var link = body.querySelector(".fragment-link");
    details.dataset.state = "loading";
    details.setAttribute("aria-busy", "true");
    body.replaceChildren(message("Loading…", "loading"));
    var headers = {};
    headers[REGION_HEADER] = FRAGMENT;
    var loading = fetch(details.getAttribute("data-fragment-url"), {
      credentials: "same-origin",
      headers: headers
    })
      .then(function (response) {
        if (!response.ok) throw new Error(String(response.status));
        // Only an answer rendered as a fragment is inserted (never a whole page, e.g. a login).
        if (response.headers.get(REGION_HEADER) !== FRAGMENT) throw new Error("unexpected answer");
        return response.text();
      })
      .then(function (html) {
        var parsed = new DOMParser().parseFromString(html, "text/html");
        body.replaceChildren.apply(body, Array.prototype.slice.call(parsed.body.childNodes));
        details.dataset.state = "loaded";
        return true;
      })
      .catch(function (error) {
        var failed = message("Could not load this section (" + failureStatus(error) + ").", "load-error");
        if (link) body.replaceChildren(failed, link);
        else body.replaceChildren(failed);
        // A later opening tries again.
        details.dataset.state = "failed";
        return false;
      })
      .then(function (loaded) {
        pending.delete(details);
        details.removeAttribute("aria-busy");
        return loaded;
      });
    pending.set(details, loading);
    return loading;
  }

  function onToggle(event) {
    var details = event.target;
    if (!details.open || !details.matches) return;
    if (details.matches("details.artifact-viewer")) loadViewer(details);
    else if (details.matches("details.lazy-section")) loadSection(details);
  }

  // The section that loads a card not on the page yet (a card of a task).
  function sectionHolding(id) {
    var sections = document.querySelectorAll("details.lazy-section[data-card-anchors]");
    for (var i = 0; i < sections.length; i++) {
      if (sections[i].getAttribute("data-card-anchors").split(" ").indexOf(id) !== -1) {
        return sections[i];
      }
    }
    return null;
  }

  function show(target, focus) {
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    target.scrollIntoView({ block: "start" });
    var summary = focus && target.tagName === "DETAILS" && target.querySelector(":scope > summary");
    if (summary) summary.focus({ preventScroll: true });
  }

  function reveal(id, focus) {
    var target = id && document.getElementById(id);
    if (target) {
      show(target, focus);
      return;
    }
    var section = id && sectionHolding(id);
    if (!section) return;
    show(section, false);
    loadSection(section).then(function () {
      var loaded = document.getElementById(id);
      if (loaded) show(loaded, focus);
    });
  }

  function revealFragment() {
    reveal(decodeURIComponent(window.location.hash.slice(1)), false);
  }

  // A link to a card of a task points at the task's own page (it works without scripts); here the
  // task opens in place instead.
  function onClick(event) {
    var link = event.target.closest && event.target.closest("a[data-task]");
    if (!link || event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    if (!document.getElementById(link.getAttribute("data-task"))) return;
    event.preventDefault();
    history.pushState(null, "", link.hash);
    reveal(decodeURIComponent(link.hash.slice(1)), true);
  }

  // toggle does not bubble; listen in the capture phase for every viewer, including ones added later.
  document.addEventListener("toggle", onToggle, true);
  document.addEventListener("click", onClick);
  window.addEventListener("hashchange", revealFragment);
  document.querySelectorAll("details.artifact-viewer[open]").forEach(loadViewer);
  document.querySelectorAll("details.lazy-section[open]").forEach(loadSection);
  revealFragment();
})();
