// allocbench report: click a column heading to sort its table (again to reverse); type in a
// table's filter box to show only the rows that contain the text. The pages read the same
// without this script.
(function () {
  "use strict";
  function key(cell) {
    var text = (cell.getAttribute("data-sort") || cell.textContent).trim();
    var number = parseFloat(text.replace(/[,\u202f ]/g, "").replace(/^\+/, ""));
    return isNaN(number) ? { n: null, t: text.toLowerCase() } : { n: number, t: text };
  }
  function compare(a, b) {
    if (a.n !== null && b.n !== null) return a.n - b.n;
    if (a.n !== null) return -1;
    if (b.n !== null) return 1;
    return a.t < b.t ? -1 : a.t > b.t ? 1 : 0;
  }
  function sortBy(table, column, heading) {
    var body = table.tBodies[0];
    if (!body) return;
    var descending = heading.getAttribute("aria-sort") === "ascending";
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (x, y) {
      var order = compare(key(x.cells[column]), key(y.cells[column]));
      return descending ? -order : order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.removeAttribute("aria-sort");
    });
    heading.setAttribute("aria-sort", descending ? "descending" : "ascending");
  }
  function sortable(table) {
    if (!table.tHead || !table.tHead.rows.length) return;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
      th.classList.add("sortable");
      th.tabIndex = 0;
      th.title = "sort";
      th.addEventListener("click", function () { sortBy(table, column, th); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(table, column, th); }
      });
    });
  }
  function filterable(table) {
    var box = document.createElement("input");
    box.type = "search";
    box.placeholder = "filter rows";
    box.className = "filter";
    box.setAttribute("aria-label", "filter the rows of the table below");
    table.parentNode.insertBefore(box, table);
    box.addEventListener("input", function () {
      var wanted = box.value.toLowerCase();
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        row.hidden = wanted !== "" && row.textContent.toLowerCase().indexOf(wanted) < 0;
      });
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("main table"), sortable);
    Array.prototype.forEach.call(document.querySelectorAll("main table.filterable"), filterable);
  });
})();
