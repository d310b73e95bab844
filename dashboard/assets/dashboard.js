// The dashboard's script: loaded first, so that it sees every error of what follows (uPlot
// and the charts); it draws each chart the page's JSON describes with uPlot, then writes into
// #dashboard-status what happened: every script error and console error, and each chart's
// canvas size and painted pixels. The headless-browser test reads that element from the DOM.
(function () {
  "use strict";
  var errors = [];
  window.addEventListener("error", function (e) {
    errors.push("error: " + e.message + " at " + (e.filename || "?") + ":" + (e.lineno || 0));
  });
  window.addEventListener("unhandledrejection", function (e) {
    errors.push("unhandled rejection: " + String(e.reason));
  });
  var consoleError = console.error;
  console.error = function () {
    errors.push("console.error: " + Array.prototype.join.call(arguments, " "));
    return consoleError.apply(console, arguments);
  };

  // Colour-blind-safe (Okabe-Ito), then greys.
  var PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000", "#999999", "#666666"];

  function painted(canvas) {
    if (!canvas.width || !canvas.height) return 0;
    var d = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    var n = 0;
    for (var i = 3; i < d.length; i += 4) if (d[i] !== 0) n++;
    return n;
  }

  function draw(spec) {
    var el = document.getElementById(spec.id);
    if (!el) throw new Error("no container for chart " + spec.id);
    var opts = {
      title: spec.title,
      width: Math.max(320, (el.clientWidth || 600) - 8),
      height: 260,
      scales: { x: { time: false } },
      // A static legend: the page is read, and screenshotted, without a cursor.
      legend: { live: false },
      axes: [{ label: "seconds" }, { label: spec.y_label }],
      series: [{ label: "seconds" }].concat(spec.series.map(function (s, i) {
        return {
          label: s.label,
          stroke: PALETTE[i % PALETTE.length],
          width: 2,
          spanGaps: true,
          // Few samples (a short campaign): show them as points, or a one-sample line is empty.
          points: { show: spec.x.length < 40, size: 6 },
        };
      })),
    };
    var data = [spec.x].concat(spec.series.map(function (s) { return s.values; }));
    new uPlot(opts, data, el);
  }

  function report(specs) {
    var status = { errors: errors, charts: {} };
    specs.forEach(function (spec) {
      var el = document.getElementById(spec.id);
      var canvas = el && el.querySelector("canvas");
      status.charts[spec.id] = canvas
        ? { width: canvas.width, height: canvas.height, painted: painted(canvas) }
        : { width: 0, height: 0, painted: 0 };
    });
    var ok = errors.length === 0 && specs.every(function (s) { return status.charts[s.id].painted > 0; });
    var out = document.getElementById("dashboard-status");
    out.textContent = JSON.stringify(status);
    out.setAttribute("data-state", ok ? "ok" : "failed");
  }

  window.addEventListener("DOMContentLoaded", function () {
    var specs = [];
    try {
      specs = JSON.parse(document.getElementById("dashboard-data").textContent).charts;
      specs.forEach(draw);
    } catch (e) {
      errors.push("error: " + (e && e.stack ? e.stack : String(e)));
    }
    // uPlot paints in a microtask after construction: report after it.
    setTimeout(function () { report(specs); }, 0);
  });
})();
