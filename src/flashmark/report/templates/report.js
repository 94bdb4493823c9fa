// Counts, once the page has loaded, the charts (every <svg> of a <figure>) the browser laid
// out with a non-empty box and a non-empty drawing, into <body data-charts-drawn>. The browser
// test compares it with data-charts (how many the page holds); a reader never sees it. The
// page's CSP allows this script by its hash, which flashmark.report.html computes from this file.
addEventListener("load", function () {
  var charts = document.querySelectorAll("figure > svg"), drawn = 0;
  for (var i = 0; i < charts.length; i++) {
    var box = charts[i].getBoundingClientRect(), drawing = charts[i].getBBox();
    if (box.width > 0 && box.height > 0 && drawing.width > 0 && drawing.height > 0) drawn++;
  }
  document.body.setAttribute("data-charts-drawn", String(drawn));
});
