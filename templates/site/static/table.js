/* raise-miner: the table of all.html (every user-facing error): filters by
 * audience, exception and module, sorting by any column, shown a page at a
 * time. Rows are the page's own HTML; nothing is fetched. */
(function () {
  "use strict";
  var table = document.getElementById("errors");
  if (!table) return;
  var PAGE = 200;
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var aud = document.getElementById("filter-audience");
  var exc = document.getElementById("filter-exception");
  var mod = document.getElementById("filter-module");
  var shownCount = document.getElementById("shown");
  var more = document.getElementById("more");
  var limit = PAGE;
  function filter() {
    var a = aud.value, any = !aud.selectedIndex;
    var e = exc.value, m = mod.value.trim(), n = 0, visible = 0;
    rows.forEach(function (row) {
      var ok = (any || row.dataset.audience === a) &&
        (!exc.selectedIndex || row.dataset.exception === e) &&
        (!m || row.dataset.module.indexOf(m) >= 0);
      if (ok) n++;
      row.hidden = !ok || n > limit;
      if (!row.hidden) visible++;
    });
    shownCount.textContent = n + " of " + rows.length + " shown" +
      (visible < n ? " (the first " + visible + ")" : "");
    if (more) more.hidden = visible >= n;
  }
  function reset() { limit = PAGE; filter(); }
  aud.addEventListener("change", reset);
  exc.addEventListener("change", reset);
  mod.addEventListener("input", reset);
  if (more) more.addEventListener("click", function () { limit += PAGE; filter(); });
  table.querySelectorAll("th button").forEach(function (button) {
    button.addEventListener("click", function () {
      var key = button.dataset.sort;
      var asc = button.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("th button").forEach(function (b) { b.removeAttribute("aria-sort"); });
      button.setAttribute("aria-sort", asc ? "ascending" : "descending");
      var numeric = key === "line" || key === "sites";
      function value(row) { return key === "title" ? row.cells[1].textContent : row.dataset[key] || ""; }
      rows.sort(function (a, b) {
        var x = value(a), y = value(b);
        var c = numeric ? x - y : x.localeCompare(y);
        if (!c) c = a.dataset.module.localeCompare(b.dataset.module) || a.dataset.line - b.dataset.line;
        return asc ? c : -c;
      });
      var frag = document.createDocumentFragment();
      rows.forEach(function (row) { frag.appendChild(row); });
      body.appendChild(frag);
      filter();
    });
  });
  filter();
})();
