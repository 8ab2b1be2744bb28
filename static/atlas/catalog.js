// RL Data Atlas catalog page: applies controls without a full reload, the "/" shortcut, the
// details drawer and the curator sync. The page works without this script (GET form + links).
(function () {
  "use strict";

  var REGION_HEADER = "X-Atlas-Region";
  var SEARCH_DELAY_MS = 250;
  var BUSY_RETRY_MS = 2500;
  var POLL_MS = 1000;
  var POLL_LIMIT = 60;
  var LOADING_TEXT = "Loading the packaged task-curation catalog. Saved reviews remain available…";
  var LOADED_SUFFIX = "Packaged task-curation catalog loaded.";
  var SEPARATOR = "  ·  ";
  var PARAM_ORDER = ["q", "origin", "type", "turns", "family", "benchmark", "quality",
    "difficulty", "show_bad", "show_excluded", "sort", "page", "page_size"];

  var body = document.body;
  var curator = body.getAttribute("data-curator") === "1";
  var form = document.getElementById("controls");
  var search = document.getElementById("search");
  var banner = document.getElementById("sync-banner");
  var liveCount = document.getElementById("live-count");
  var drawer = document.getElementById("details-drawer");
  var drawerBody = document.getElementById("drawer-body");
  var exportLink = document.getElementById("export");
  var refreshForm = document.getElementById("refresh-form");
  var refreshButton = document.getElementById("refresh");
  var clientStatus = null;
  var drawerOpener = null;
  var searchTimer = null;
  var navigation = 0;

  document.documentElement.classList.add("js");

  // -- query strings --------------------------------------------------------------------------
  function canonicalQuery(params) {
    var pairs = [];
    PARAM_ORDER.forEach(function (key) {
      var value = (params.get(key) || "").trim();
      if (!value || (key === "sort" && value === "name") || (key === "page" && value === "1") ||
          (key === "page_size" && value === "100")) {
        return;
      }
      pairs.push(encodeURIComponent(key) + "=" + encodeURIComponent(value).replace(/%20/g, "+"));
    });
    return pairs.length ? "?" + pairs.join("&") : "";
  }

  function formUrl() {
    var params = new URLSearchParams();
    new FormData(form).forEach(function (value, key) { params.set(key, value); });
    params.delete("page");
    return "/" + canonicalQuery(params);
  }

  function exportUrl(url) {
    var params = new URL(url, location.href).searchParams;
    params.delete("page");
    params.delete("page_size");
    return "/export.csv" + canonicalQuery(params);
  }

  function setHidden(name, value) {
    var input = form.querySelector('input[type="hidden"][name="' + name + '"]');
    if (!value) {
      if (input) { input.remove(); }
      return;
    }
    if (!input) {
      input = document.createElement("input");
      input.type = "hidden";
      input.name = name;
      form.insertBefore(input, form.firstChild);
    }
    input.value = value;
  }

  function syncForm(url) {
    var params = new URL(url, location.href).searchParams;
    ["origin", "sort", "page_size"].forEach(function (name) { setHidden(name, params.get(name)); });
    if (document.activeElement !== search) { search.value = params.get("q") || ""; }
    form.querySelectorAll("select").forEach(function (select) {
      var value = params.get(select.name) || "";
      var known = Array.prototype.some.call(select.options, function (o) { return o.value === value; });
      select.value = known ? value : "";
    });
    var quality = params.get("quality");
    form.elements.show_bad.checked = params.get("show_bad") === "1" || quality === "bad";
    form.elements.show_excluded.checked = params.get("show_excluded") === "1";
  }

  // -- status, banner and time ----------------------------------------------------------------
  function setBanner(text, warning) {
    banner.textContent = text;
    banner.classList.toggle("warning", Boolean(warning));
  }

  function setStatus(text, state) {
    clientStatus = text ? { text: text, state: state } : null;
    applyStatus();
  }

  function applyStatus() {
    var status = document.getElementById("metric-status");
    if (!status || !clientStatus) { return; }
    status.textContent = clientStatus.text;
    var dot = status.parentNode.querySelector(".status-dot");
    if (dot) {
      dot.classList.remove("status-ok", "status-warn", "status-busy");
      dot.classList.add("status-" + clientStatus.state);
    }
  }

  function localiseTimes() {
    var node = document.querySelector("#checked-at time");
    if (!node) { return; }
    var when = new Date(node.getAttribute("datetime"));
    if (isNaN(when.getTime())) { return; }
    var hours = String(when.getHours()).padStart(2, "0");
    var minutes = String(when.getMinutes()).padStart(2, "0");
    var date = when.toLocaleDateString("en-US", { month: "short", day: "numeric", year: "numeric" });
    node.textContent = "Last checked " + hours + ":" + minutes + " · " + date;
    node.title = node.getAttribute("datetime");
  }

  function readFailedText(status) {
    var prefix = "Catalog read failed (" + status + "). Saved sources remain available";
    return curator ? prefix + "; retry with Refresh sources." : prefix + ". Reload this page to retry.";
  }

  function announce() {
    var count = document.getElementById("result-count");
    if (count) { liveCount.textContent = count.textContent; }
  }

  // -- loading the regions ----------------------------------------------------------------------
  function loadRegions(url, options) {
    var ticket = ++navigation;
    var push = options && options.push;
    return fetch(url, { headers: { [REGION_HEADER]: "1" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) { throw response.status; }
        return response.text();
      })
      .then(function (html) {
        if (ticket !== navigation) { return; }
        var parsed = new DOMParser().parseFromString(html, "text/html");
        parsed.querySelectorAll("[data-region]").forEach(function (fresh) {
          var name = fresh.getAttribute("data-region");
          var current = document.querySelector('.region[data-region="' + name + '"]');
          if (current) { current.innerHTML = fresh.innerHTML; }
        });
        if (push) { history.pushState({ atlas: true }, "", url); }
        exportLink.href = exportUrl(url);
        applyStatus();
        localiseTimes();
        announce();
      })
      .catch(function (status) {
        setBanner(readFailedText(typeof status === "number" ? status : "network"), true);
      });
  }

  function navigate(url) {
    syncForm(url);
    return loadRegions(url, { push: url !== location.pathname + location.search });
  }

  // -- controls ----------------------------------------------------------------------------------
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    clearTimeout(searchTimer);
    navigate(formUrl());
  });

  form.addEventListener("change", function (event) {
    var target = event.target;
    if (target === search) { return; }
    if (target.name === "quality" && target.value === "bad") {
      form.elements.show_bad.checked = true;
    }
    if (target.name === "show_bad" && !target.checked && form.elements.quality.value === "bad") {
      form.elements.quality.value = "";
    }
    navigate(formUrl());
  });

  search.addEventListener("input", function () {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(function () { navigate(formUrl()); }, SEARCH_DELAY_MS);
  });

  document.addEventListener("click", function (event) {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey ||
        event.shiftKey || event.altKey) {
      return;
    }
    var details = event.target.closest(".details-button");
    if (details) {
      event.preventDefault();
      openDrawer(details);
      return;
    }
    var link = event.target.closest(".tabs a, .sort-link, .pager a");
    if (link) {
      event.preventDefault();
      navigate(link.getAttribute("href"));
    }
  });

  window.addEventListener("popstate", function () {
    syncForm(location.href);
    loadRegions(location.pathname + location.search, { push: false });
  });

  document.addEventListener("keydown", function (event) {
    if (event.key === " " && event.target.classList && event.target.classList.contains("details-button")) {
      event.preventDefault();
      openDrawer(event.target);
      return;
    }
    if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) { return; }
    var active = document.activeElement;
    var tag = active ? active.tagName : "";
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || drawer.open) { return; }
    event.preventDefault();
    search.focus();
    search.select();
  });

  // -- details drawer ------------------------------------------------------------------------------
  function openDrawer(button) {
    var template = document.getElementById(button.getAttribute("data-details"));
    if (!template) { return; }
    drawerBody.replaceChildren(template.content.cloneNode(true));
    drawer.setAttribute("aria-labelledby", "drawer-title");
    drawerOpener = button;
    drawer.showModal();
    document.getElementById("drawer-close").focus();
  }

  document.getElementById("drawer-close").addEventListener("click", function () { drawer.close(); });
  drawer.addEventListener("click", function (event) {
    if (event.target === drawer) { drawer.close(); }
  });
  drawer.addEventListener("close", function () {
    drawerBody.replaceChildren();
    if (drawerOpener && document.body.contains(drawerOpener)) { drawerOpener.focus(); }
    drawerOpener = null;
  });

  // -- curator sync ------------------------------------------------------------------------------
  function csrfToken() {
    var input = refreshForm && refreshForm.querySelector('input[name="csrfmiddlewaretoken"]');
    return input ? input.value : "";
  }

  function successText(results) {
    var parts = results.map(function (item) { return item.origin + " " + item.revision.slice(0, 8); });
    parts.push(LOADED_SUFFIX);
    return parts.join(SEPARATOR);
  }

  function reloadCurrent() {
    return loadRegions(location.pathname + location.search, { push: false });
  }

  function handleOutcome(status, payload, alwaysReload) {
    if (status === 200 && payload.busy) {
      setStatus(null);
      setBanner(payload.message, false);
      setTimeout(reloadCurrent, BUSY_RETRY_MS);
      return Promise.resolve();
    }
    if (status === 200) {
      var changed = payload.results.some(function (item) { return item.changed; });
      setStatus("Up to date", "ok");
      setBanner(successText(payload.results), false);
      return changed || alwaysReload ? reloadCurrent() : Promise.resolve();
    }
    setStatus("Needs attention", "warn");
    if (status === 422) {
      setBanner(payload.detail + ". Keeping the last successful snapshot.", true);
    } else {
      setBanner("Refresh failed (" + status + "). Saved sources remain available; retry with Refresh sources.", true);
    }
    return alwaysReload ? reloadCurrent() : Promise.resolve();
  }

  function pollRefreshes(previousRunId, attempt) {
    return new Promise(function (resolve) { setTimeout(resolve, POLL_MS); })
      .then(function () { return fetch(body.getAttribute("data-refreshes-url"), { credentials: "same-origin" }); })
      .then(function (response) { return response.json(); })
      .then(function (state) {
        var run = state.last_run;
        if (run && String(run.id) !== String(previousRunId)) {
          if (run.outcome === "failed") { return handleOutcome(422, { detail: run.error }, true); }
          var results = state.results.map(function (item) {
            return { origin: item.origin, revision: item.revision, changed: run.outcome === "synced" };
          });
          return handleOutcome(200, { busy: false, results: results }, false);
        }
        if (attempt >= POLL_LIMIT) {
          return handleOutcome(200, { busy: true, message: "Another visitor is refreshing the catalog. Your saved data remains available." });
        }
        return pollRefreshes(previousRunId, attempt + 1);
      });
  }

  function postRefresh(query, alwaysReload) {
    setStatus("Checking…", "busy");
    setBanner(LOADING_TEXT, false);
    var previousRunId = body.getAttribute("data-last-run-id");
    return fetch(body.getAttribute("data-refresh-url") + query, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken(), "Accept": "application/json" },
    }).then(function (response) {
      if (response.status === 202) { return pollRefreshes(previousRunId, 0); }
      return response.json().catch(function () { return {}; }).then(function (payload) {
        return handleOutcome(response.status, payload, alwaysReload);
      });
    }).catch(function () {
      return handleOutcome("network", {}, alwaysReload);
    });
  }

  if (refreshForm) {
    refreshForm.addEventListener("submit", function (event) {
      event.preventDefault();
      refreshButton.disabled = true;
      postRefresh("?force=true", true).then(function () { refreshButton.disabled = false; });
    });
  }

  localiseTimes();
  if (curator) { postRefresh("?force=false&background=1", false); }
})();
