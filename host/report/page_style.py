"""The page's inline style and the script the browser test reads (no external resources)."""

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; max-width: 1500px;
       padding: 0 24px 48px; color: #1d1d1f; line-height: 1.4; font-size: 14px; }
h1 { font-size: 24px; margin: 24px 0 4px; }
h2 { font-size: 19px; margin: 36px 0 8px; padding-top: 8px; border-top: 2px solid #ddd; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.sub { color: #555; margin: 0 0 12px; }
.banner { background: #fff4d6; border: 1px solid #e6c36a; border-radius: 6px; padding: 8px 12px; margin: 8px 0 12px; }
.tally { margin: 0 0 12px; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f5; }
td.num { font-variant-numeric: tabular-nums; max-width: 420px; }
td.note { color: #444; min-width: 320px; max-width: 560px; }
td.arr { max-width: 420px; font-variant-numeric: tabular-nums; }
td.probe { white-space: nowrap; }
.tables { display: flex; flex-wrap: wrap; gap: 12px; margin-top: 12px; align-items: flex-start; }
.toc { columns: 3 220px; padding-left: 18px; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(640px, 1fr)); gap: 18px; align-items: start; }
figure { margin: 0; border: 1px solid #e3e3e6; border-radius: 6px; padding: 8px; background: #fff; }
figure.wide { grid-column: 1 / -1; }
figure img.plot { width: 100%; height: auto; display: block; }
figcaption { font-size: 12px; color: #444; margin-top: 4px; }
figcaption code, td code { font-size: 12px; }
.status-ok { color: #1a7f37; } .status-not_determinable { color: #9a6700; }
.status-failed { color: #cf222e; font-weight: 600; } .status-skipped { color: #6e7781; }
.box { border-left: 4px solid #d4a72c; background: #fff8e5; padding: 6px 10px; margin: 8px 0; }
.box.error { border-color: #cf222e; background: #ffebe9; }
.small-table { overflow-x: auto; }
.picture { margin: 8px 0 16px; }
.headline { margin: 0 0 16px; }
.headline caption { text-align: left; font-weight: 600; padding: 4px 0; }
.headline .hv { display: inline-block; margin-right: 14px; white-space: nowrap; }
.picture svg { max-width: 100%; height: auto; display: block; }
"""

# Sets data-plots-expected / data-plots-rendered and the picture's data-picture-size on <body>
# once every image has loaded
# (tests/report/check_report.py reads them from the DOM).
SCRIPT = """
window.addEventListener("load", function () {
  var images = document.querySelectorAll("img.plot");
  var rendered = 0;
  images.forEach(function (img) { if (img.complete && img.naturalWidth > 0) rendered++; });
  document.body.dataset.plotsExpected = String(images.length);
  document.body.dataset.plotsRendered = String(rendered);
  var picture = document.querySelector("#picture svg");
  var box = picture ? picture.getBoundingClientRect() : null;
  document.body.dataset.pictureSize = box ? Math.round(box.width) + "x" + Math.round(box.height) : "none";
});
"""
