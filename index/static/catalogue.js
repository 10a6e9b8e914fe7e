// Client-side filter of the catalogue: by kind (select) and by text (every word must match).
(function () {
  var kind = document.getElementById("kind");
  var text = document.getElementById("filter");
  var rows = Array.prototype.slice.call(document.querySelectorAll("#components tbody tr"));
  var count = document.getElementById("shown");
  function apply() {
    var k = kind.value;
    var words = text.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    rows.forEach(function (row) {
      var hay = row.getAttribute("data-text");
      var ok = (!k || row.getAttribute("data-kind") === k) &&
        words.every(function (w) { return hay.indexOf(w) !== -1; });
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = String(shown);
  }
  kind.addEventListener("change", apply);
  text.addEventListener("input", apply);
  apply();
})();
