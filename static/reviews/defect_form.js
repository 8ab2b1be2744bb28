// Admin "Confirm verifier defect" form: once a source is chosen, the confirming-review choices
// are that source's verifier_defect collections (the server checks the same on submit).
(function () {
  "use strict";
  function ready(callback) {
    if (document.readyState !== "loading") { callback(); } else { document.addEventListener("DOMContentLoaded", callback); }
  }
  ready(function () {
    var source = document.getElementById("id_source");
    var review = document.getElementById("id_confirming_review");
    if (!source || !review) { return; }
    var url = review.getAttribute("data-options-url");
    function reload() {
      var chosen = source.value;
      fetch(url + "?source=" + encodeURIComponent(chosen), { credentials: "same-origin" })
        .then(function (response) { return response.ok ? response.json() : { options: [] }; })
        .then(function (body) {
          var previous = review.value;
          review.replaceChildren();
          var empty = document.createElement("option");
          empty.value = "";
          empty.textContent = body.options.length ? "---------" : "No verifier_defect collection for this source";
          review.appendChild(empty);
          body.options.forEach(function (item) {
            var option = document.createElement("option");
            option.value = item.id;
            option.textContent = item.label;
            if (item.id === previous) { option.selected = true; }
            review.appendChild(option);
          });
        });
    }
    // The autocomplete widget draws its own combobox, named only by its (empty) selection:
    // name it by the field's label as well, whenever the widget draws or redraws itself.
    var label = document.querySelector('label[for="id_source"]');
    var field = source.closest(".form-row") || document.body;
    function nameWidget() {
      if (!label) { return; }
      if (!label.id) { label.id = "id_source_label"; }
      field.querySelectorAll(".select2-selection").forEach(function (box) {
        var current = box.getAttribute("aria-labelledby") || "";
        if (current.split(" ").indexOf(label.id) < 0) {
          box.setAttribute("aria-labelledby", (label.id + " " + current).trim());
        }
      });
      field.querySelectorAll(".select2-selection__rendered").forEach(function (text) {
        if (text.getAttribute("aria-labelledby") !== label.id) {
          text.setAttribute("aria-labelledby", label.id);
        }
      });
    }
    new MutationObserver(nameWidget).observe(field, { childList: true, subtree: true });
    nameWidget();
    source.addEventListener("change", reload);
    if (window.django && window.django.jQuery) { window.django.jQuery(source).on("change", reload); }
    if (source.value) { reload(); }
  });
})();
