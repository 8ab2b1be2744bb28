// RL Data Atlas catalog page: applies controls without a full reload (with a visible loading
// state, focus kept on the control used, errors that clear on the next success), the "/"
// shortcut, the details drawer (loaded from the source page when opened, shareable as ?source=)
// and the curator sync. The page works without this script (GET form + links).
(function () {
  "use strict";

  var REGION_HEADER = "X-Atlas-Region";
  var SEARCH_DELAY_MS = 250;
  var BUSY_RETRY_MS = 2500;
  var POLL_MS = 1000;
  var POLL_LIMIT = 60;
  var LOADING_TEXT = "Loading the packaged task-curation catalog. Saved reviews remain available…";
  var LOADED_SUFFIX = "Packaged task-curation catalog loaded.";
  var PARAM_ORDER = ["q", "origin", "type", "turns", "family", "benchmark", "quality",
    "difficulty", "difficulty_status", "show_bad", "show_excluded", "sort", "page", "page_size",
    "source"];
  var DRAWER_LOADING = "Loading source details…";

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
  var drawerPageLink = document.getElementById("drawer-page");
  var clientStatus = null;
  var drawerOpener = null;
  var drawerSource = null;
  var drawerTicket = 0;
  var searchTimer = null;
  var navigation = 0;
  var bannerDefault = { text: banner.textContent, warning: banner.classList.contains("warning") };
  var bannerFailed = false;
  var filterPanel = document.getElementById("filter-panel");
  var filterSummary = document.getElementById("filter-summary");
  var FILTER_KEYS = ["type", "turns", "family", "benchmark", "quality", "difficulty",
    "difficulty_status", "show_bad", "show_excluded"];

  document.documentElement.classList.add("js");

  // The filters fold into a disclosure below 768 px only; where CSS cannot keep a closed
  // <details> showing its content on wide screens, open it.
  var wide = window.matchMedia("(min-width: 768px)");
  function fitFilterPanel() {
    var cssKeepsItOpen = window.CSS && CSS.supports && CSS.supports("selector(::details-content)");
    if (wide.matches && !cssKeepsItOpen) { filterPanel.open = true; }
  }
  fitFilterPanel();
  wide.addEventListener("change", fitFilterPanel);

  function updateFilterSummary() {
    var params = new URL(formUrl(), location.href).searchParams;
    var active = FILTER_KEYS.filter(function (key) { return params.get(key); }).length;
    filterSummary.textContent = active ? "Filters · " + active + " active" : "Filters";
  }

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
    params.delete("source");
    return "/export.csv" + canonicalQuery(params);
  }

  function withoutSource(url) {
    var parsed = new URL(url, location.href);
    parsed.searchParams.delete("source");
    return parsed.pathname + canonicalQuery(parsed.searchParams);
  }

  function withSource(url, sourceId) {
    var parsed = new URL(url, location.href);
    parsed.searchParams.set("source", sourceId);
    return parsed.pathname + canonicalQuery(parsed.searchParams);
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
    ["origin", "sort"].forEach(function (name) { setHidden(name, params.get(name)); });
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
    banner.classList.toggle("sync-banner-quiet", text === bannerDefault.text && !warning);
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
  // What had focus inside a region that is about to be replaced, so the same control can have it
  // again afterwards (a sort header, a tab, a pager link).
  function focusTarget() {
    var active = document.activeElement;
    if (!active || !active.closest || !active.closest(".region")) { return null; }
    if (active.hasAttribute("data-sort")) {
      return '.sort-link[data-sort="' + active.getAttribute("data-sort") + '"]';
    }
    if (active.hasAttribute("data-tab")) {
      return '.tabs a[data-tab="' + CSS.escape(active.getAttribute("data-tab")) + '"]';
    }
    var pager = active.closest(".pager");
    if (pager) {
      var which = active.getAttribute("data-page");
      return which ? "#" + pager.id + ' a[data-page="' + which + '"]' : "#" + pager.id;
    }
    return null;
  }

  function setBusy(busy) {
    var results = document.getElementById("results-region");
    results.setAttribute("aria-busy", busy ? "true" : "false");
    results.classList.toggle("loading", busy);
    document.getElementById("metrics-region").classList.toggle("loading", busy);
  }

  function loadRegions(url, options) {
    var ticket = ++navigation;
    var push = options && options.push;
    var toTop = options && options.toTop;
    var refocus = focusTarget();
    setBusy(true);
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
        if (parsed.title) { document.title = parsed.title; }
        if (push) { history.pushState({ atlas: true }, "", url); }
        shownQuery = withoutSource(url);
        exportLink.href = exportUrl(url);
        loadFacets(url);
        setBusy(false);
        if (bannerFailed) {
          bannerFailed = false;
          setBanner(bannerDefault.text, bannerDefault.warning);
        }
        restoreFocus(refocus);
        if (toTop) { scrollToTable(); }
        applyStatus();
        localiseTimes();
        announce();
      })
      .catch(function (status) {
        if (ticket !== navigation) { return; }
        setBusy(false);
        bannerFailed = true;
        setBanner(readFailedText(typeof status === "number" ? status : "network"), true);
      });
  }

  // Each filter option says how many sources it would show in this view, asked after the view
  // (so the page never waits for a count over the whole catalog). Only the options' texts change:
  // each select keeps its element, focus and value. Without an answer they stay without counts.
  var facetTicket = 0;
  function loadFacets(url) {
    var ticket = ++facetTicket;
    var params = new URL(url, location.href).searchParams;
    ["source", "page", "page_size"].forEach(function (key) { params.delete(key); });
    var query = canonicalQuery(params);
    return fetch(form.getAttribute("data-facets-url") + query, { credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) { throw response.status; }
        return response.json();
      })
      .then(function (answer) {
        if (ticket !== facetTicket) { return; }
        Object.keys(answer.counts).forEach(function (name) {
          var select = form.elements[name];
          if (!select || select.tagName !== "SELECT") { return; }
          var counts = answer.counts[name];
          Array.prototype.forEach.call(select.options, function (option) {
            if (!option.hasAttribute("data-label")) {
              option.setAttribute("data-label", option.textContent);
            }
            var count = (counts[option.value] || 0).toLocaleString("en-US");
            option.textContent = option.getAttribute("data-label") + " (" + count + ")";
          });
        });
        form.setAttribute("data-facets-for", query);
      })
      .catch(function () { return null; });
  }

  function restoreFocus(selector) {
    if (!selector) { return; }
    var target = document.querySelector(selector);
    if (!target && selector.indexOf("#pager") === 0) {
      target = document.querySelector(selector.split(" ")[0] + " a") || document.getElementById("table-wrap");
    }
    if (target) { target.focus({ preventScroll: true }); }
  }

  function scrollToTable() {
    var wrap = document.getElementById("table-wrap");
    if (!wrap) { return; }
    wrap.scrollTop = 0;
    var pager = document.getElementById("pager-top") || wrap;
    var top = pager.getBoundingClientRect().top;
    if (top < 0 || top > window.innerHeight) {
      // A little room above the pager, so it does not sit glued to the edge of the screen.
      window.scrollTo({ top: Math.max(0, window.scrollY + top - 8) });
    }
  }

  function navigate(url, options) {
    syncForm(url);
    updateFilterSummary();
    var target = withoutSource(url);
    var current = withoutSource(location.pathname + location.search);
    return loadRegions(target, {
      push: target !== current,
      toTop: Boolean(options && options.toTop),
    });
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
    var details = event.target.closest("a.info");
    if (details) {
      event.preventDefault();
      openDrawer(details.closest("tr").getAttribute("data-source-id"), details, true);
      return;
    }
    var link = event.target.closest(".tabs a, .sort-link, #results-region .pager a");
    if (link) {
      event.preventDefault();
      navigate(link.getAttribute("href"), { toTop: Boolean(link.closest(".pager")) });
    }
  });

  var shownQuery = withoutSource(location.pathname + location.search);
  window.addEventListener("popstate", function () {
    var here = withoutSource(location.pathname + location.search);
    if (here !== shownQuery) {
      syncForm(location.href);
      updateFilterSummary();
      loadRegions(here, { push: false });
    }
    var wanted = new URLSearchParams(location.search).get("source");
    if (wanted && wanted !== drawerSource) {
      openDrawer(wanted, null, false);
    } else if (!wanted && drawer.open) {
      closeDrawer(false);
    }
  });

  document.addEventListener("keydown", function (event) {
    if (event.key === " " && event.target.classList && event.target.classList.contains("info")) {
      event.preventDefault();
      event.target.click();
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
  // The drawer shows the body of the source page, fetched when it opens; its URL (?source=<id>)
  // can be shared and restores the open drawer. A shared URL is anyone's to write, so the id is
  // checked first (the server's rule, atlas/rules/source_ids.py, in the parts that decide where a URL
  // points: no control character, no empty, "." or ".." segment), and only an answer the server
  // rendered as a drawer (its X-Atlas-Region: details header) is shown; anything else would be
  // another page's markup, live in this one.
  var SOURCE_ID_MAX = 255;
  var DRAWER_REGION = "details";

  function isSourceId(sourceId) {
    if (typeof sourceId !== "string" || !sourceId || sourceId.length > SOURCE_ID_MAX) { return false; }
    if (/[\u0000-\u001f\u007f\\%?#]/.test(sourceId) || !/^[^\s./]/.test(sourceId)) { return false; }
    return sourceId.split("/").every(function (segment) {
      return segment !== "" && segment !== "." && segment !== "..";
    });
  }

  function sourceUrl(sourceId) {
    return "/sources/" + encodeURIComponent(sourceId).replace(/%3A/g, ":").replace(/%2F/g, "/") + "/";
  }

  function drawerFailed(ticket, reason) {
    if (ticket !== drawerTicket) { return; }
    drawerBody.setAttribute("aria-busy", "false");
    drawerBody.textContent = "Could not load this source (" + reason + "). Open the source page instead.";
  }

  function openDrawer(sourceId, opener, push) {
    var ticket = ++drawerTicket;
    var valid = isSourceId(sourceId);
    var url = valid ? sourceUrl(sourceId) : "/";
    drawerSource = sourceId;
    drawerOpener = opener;
    drawerPageLink.href = url;
    drawer.setAttribute("aria-labelledby", "drawer-eyebrow");
    drawerBody.setAttribute("aria-busy", "true");
    drawerBody.textContent = DRAWER_LOADING;
    if (!drawer.open) { drawer.showModal(); }
    document.getElementById("drawer-close").focus();
    if (push) {
      history.pushState({ atlas: true }, "", withSource(location.pathname + location.search, sourceId));
    }
    if (!valid) {
      drawerFailed(ticket, "not a source ID");
      return;
    }
    fetch(url, { headers: { [REGION_HEADER]: DRAWER_REGION }, credentials: "same-origin", redirect: "error" })
      .then(function (response) {
        if (!response.ok) { throw response.status; }
        if (response.headers.get(REGION_HEADER) !== DRAWER_REGION) { throw "not a source's details"; }
        return response.text();
      })
      .then(function (html) {
        if (ticket !== drawerTicket) { return; }
        var parsed = new DOMParser().parseFromString(html, "text/html");
        // The server escapes every value it renders; nothing that acts on the page belongs in a
        // drawer, so none of it is kept even if a template ever let some through.
        parsed.body.querySelectorAll("script, meta, base, link, style, form, iframe, object, embed")
          .forEach(function (node) { node.remove(); });
        drawerBody.replaceChildren.apply(drawerBody, Array.prototype.slice.call(parsed.body.childNodes));
        drawerBody.setAttribute("aria-busy", "false");
        if (document.getElementById("drawer-title")) {
          drawer.setAttribute("aria-labelledby", "drawer-title");
        }
      })
      .catch(function (status) { drawerFailed(ticket, status); });
  }

  function closeDrawer(updateUrl) {
    if (drawer.open) {
      drawer.dataset.keepUrl = updateUrl ? "" : "1";
      drawer.close();
    }
  }

  document.getElementById("drawer-close").addEventListener("click", function () { closeDrawer(true); });
  drawer.addEventListener("click", function (event) {
    if (event.target === drawer) { closeDrawer(true); }
  });
  drawer.addEventListener("close", function () {
    ++drawerTicket;
    drawerBody.replaceChildren();
    drawerSource = null;
    if (drawer.dataset.keepUrl !== "1" && new URLSearchParams(location.search).get("source")) {
      history.pushState({ atlas: true }, "", withoutSource(location.pathname + location.search));
    }
    drawer.dataset.keepUrl = "";
    var opener = drawerOpener;
    if (!opener || !document.body.contains(opener)) {
      opener = null;
    }
    if (opener) { opener.focus(); }
    drawerOpener = null;
  });

  // -- curator sync ------------------------------------------------------------------------------
  function csrfToken() {
    var input = refreshForm && refreshForm.querySelector('input[name="csrfmiddlewaretoken"]');
    return input ? input.value : "";
  }

  // What the sync changed, in words, as the server says it ("MarinSkyRL: 2 added  ·  Task Trove:
  // unchanged  ·  Packaged task-curation catalog loaded.").
  function successText(payload) {
    return payload.summary || LOADED_SUFFIX;
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
      setBanner(successText(payload), false);
      return changed || alwaysReload ? reloadCurrent() : Promise.resolve();
    }
    setStatus("Needs attention", "warn");
    if ((status === 422 || status === 503) && payload.detail) {
      // 422: the artifact's refusal; 503: a part the sync needs is down (its reason).
      setBanner(payload.detail.replace(/\.$/, "") + ". Keeping the last successful snapshot.", true);
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
          return handleOutcome(200, { busy: false, results: results, summary: run.summary }, false);
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
  loadFacets(location.pathname + location.search);
  var initialSource = new URLSearchParams(location.search).get("source");
  if (initialSource) {
    var row = document.querySelector('tr[data-source-id="' + CSS.escape(initialSource) + '"] a.info');
    openDrawer(initialSource, row, false);
  }
  if (curator) { postRefresh("?force=false&background=1", false); }
})();
