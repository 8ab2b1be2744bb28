// The API documentation (/api/docs/): names and keyboard access Swagger UI leaves out, given to
// what it renders as it renders it: a select names its parameter, the dialogs' close buttons say
// so, and a scrolling code sample can be reached by keyboard (axe, tests/browser/test_api_docs.py).
(function () {
  "use strict";

  function label(root) {
    root.querySelectorAll("tr[data-param-name] select:not([aria-label])").forEach(function (select) {
      var row = select.closest("tr[data-param-name]");
      select.setAttribute("aria-label", row.getAttribute("data-param-name"));
    });
    root.querySelectorAll("button.close-modal:not([aria-label])").forEach(function (button) {
      button.setAttribute("aria-label", "Close");
    });
    root.querySelectorAll("pre.microlight:not([tabindex])").forEach(function (code) {
      code.setAttribute("tabindex", "0");
    });
  }

  var root = document.getElementById("swagger-ui");
  new MutationObserver(function () { label(root); }).observe(root, { childList: true, subtree: true });
  label(root);
})();
