#!/bin/bash
# The HTML report of `uraid bench`, built by tests/tools/render_report from
# fixed synthetic data with every chart type. Checks with python3: the HTML's
# elements balance, every inline SVG is well-formed XML, each chart carries the
# expected series with the expected number of points (and some exact values),
# text is escaped, and nothing points outside the file (no URL, no script, no
# src=). Then headless Chromium renders it to a PNG, which must be a real
# picture: its size, many colours, and the palette's series colours drawn.
# Chromium comes from `make deps` (Debian package chromium); without it the
# rendering part cannot run and the test is skipped after the static checks.
set -u
BUILD=${BUILD:-build}
RENDER=$(realpath "$BUILD/tests/tools/render_report")
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
[ -x "$RENDER" ] || { echo "FAIL: $RENDER not built"; exit 1; }
work=$(mktemp -d /tmp/uraid-report-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
html=$work/report.html

"$RENDER" "$html" || { echo "FAIL: render_report exited $?"; exit 1; }

python3 - "$html" <<'PY' || exit 1
import re, sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

path = sys.argv[1]
doc = open(path, encoding="utf-8").read()
bad = []
def need(cond, what):
    if not cond:
        bad.append(what)

# 1. The HTML's elements balance (void elements aside).
VOID = {"meta", "link", "br", "img", "hr", "input", "area", "base", "col", "source", "wbr"}
class Balance(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.text = [], [], []
    def handle_starttag(self, tag, attrs):
        if tag not in VOID:
            self.stack.append(tag)
        for k, v in attrs:
            if k == "src" or (k == "href" and not (v or "").startswith("#")):
                self.errors.append("%s=%r on <%s> points outside the file" % (k, v, tag))
    def handle_startendtag(self, tag, attrs):
        pass
    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("</%s> closes <%s>" % (tag, self.stack[-1] if self.stack else "nothing"))
        else:
            self.stack.pop()
    def handle_data(self, data):
        self.text.append(data)
p = Balance()
p.feed(doc)
p.close()
need(not p.errors, "; ".join(p.errors[:5]))
need(not p.stack, "unclosed elements: %s" % p.stack)
need("escaping: <b>not bold</b> & \"quoted\"" in "".join(p.text), "escaped note text lost")
need("<b>" not in doc, "unescaped <b> in the file")

# 2. Nothing outside the file.
for pat, what in ((r"https?:", "a URL"), (r"//", "'//'"), (r"<script", "a script"),
                  (r"<link", "a <link>"), (r"@import", "@import"), (r"\bsrc\s*=", "src="),
                  (r"url\(\s*['\"]?(?!#)", "url() to a resource"), (r"xlink:href", "xlink:href")):
    m = re.search(pat, doc, re.I)
    need(not m, "%s at offset %d: %r" % (what, m.start(), doc[max(0, m.start() - 40):m.start() + 40])
         if m else "")

# 3. Every SVG is well-formed XML; read back the series it plots.
svgs = re.findall(r"<svg\b.*?</svg>", doc, re.S)
charts, roots = [], []
for i, s in enumerate(svgs):
    try:
        root = ET.fromstring(s)
    except ET.ParseError as e:
        bad.append("svg %d not well-formed: %s" % (i, e))
        continue
    title = root.find("title").text
    series = {}
    for g in root.iter("g"):
        if g.get("class") == "series":
            pts = [el for el in g.iter() if el.get("data-x") is not None]
            need(all(el.get("data-y") is not None for el in pts), "%s: point without data-y" % title)
            series[g.get("data-series")] = pts
    charts.append((title, root.get("data-kind"), series))
    roots.append(root)

# title, kind, {series: points}, in the order the sample adds them
cfg = ["raid0, 4 members", "raid5, 4 members", "raid10, 4 members"]
mixes = ["100/0 R/W", "95/5 R/W", "65/35 R/W", "50/50 R/W", "35/65 R/W", "5/95 R/W", "0/100 R/W"]
sizes = ["512 B", "4 KiB", "8 KiB", "16 KiB", "32 KiB", "64 KiB", "128 KiB", "1 MiB"]
want = [
    ("IOPS vs queue depth", "line", {c: 9 for c in cfg}),
    ("Latency vs queue depth", "line", {"%s %s" % (c, k): 9 for c in cfg for k in ("mean", "p99")}),
    ("IOPS vs drive count", "line", {"raid0": 8, "raid5": 6, "raid10": 8, "JBOD (each drive alone)": 8}),
    ("MiB/s vs block size", "line", {c: 8 for c in cfg}),
    ("IOPS vs block size by read/write mix", "line", {m: 8 for m in mixes}),
    ("MiB/s vs block size by read/write mix", "line", {m: 8 for m in mixes}),
    ("IOPS by read/write mix and block size", "radar", {s: 7 for s in sizes}),
    ("MiB/s by read/write mix and block size", "radar", {s: 7 for s in sizes}),
    ("Latency percentiles", "points", {c: 6 for c in cfg}),
    ("IOPS over time", "line", {c: 120 for c in cfg}),
    ("IOPS over time", "line", {"raid5, 4 members, rebuilding": 900}),
    ("4 KiB random, side by side", "bar", {c: 2 for c in cfg}),
]
need(len(charts) == len(want), "%d charts instead of %d" % (len(charts), len(want)))
for (title, kind, series), (wt, wk, ws) in zip(charts, want):
    need(title == wt and kind == wk, "chart %r (%s) where %r (%s) was expected" % (title, kind, wt, wk))
    need(set(series) == set(ws), "%s: series %s instead of %s" % (wt, sorted(series), sorted(ws)))
    for name, n in ws.items():
        got = len(series.get(name, []))
        need(got == n, "%s / %s: %d points instead of %d" % (wt, name, got, n))

def values(ci, name, attr):
    return [el.get(attr) for el in charts[ci][2].get(name, [])] if ci < len(charts) else []
need([float(x) for x in values(0, cfg[0], "data-x")] == [2.0 ** i for i in range(9)],
     "queue depths plotted are not 1 .. 256")
need([float(x) for x in values(3, cfg[0], "data-x")] ==
     [512, 4096, 8192, 16384, 32768, 65536, 131072, 1048576], "block sizes plotted are wrong")
need(values(6, "4 KiB", "data-x") == mixes, "radar spokes are not the 7 mixes")
need(values(8, cfg[1], "data-x") == ["p50", "p90", "p99", "p99.9", "p99.99", "p99.999"],
     "percentile bars are not p50 .. p99.999")
ys = [float(y) for y in values(0, cfg[0], "data-y")]
need(all(a <= b for a, b in zip(ys, ys[1:])) and ys and ys[0] < ys[-1],
     "raid0 IOPS vs queue depth does not rise")
need([float(x) for x in values(2, "raid5", "data-x")] == [3, 4, 5, 6, 7, 8],
     "raid5 drive counts are not 3 .. 8 (NaN points must be left out)")
need(len(re.findall(r"<figure\b", doc)) == len(want), "a chart without its <figure>")

# 4. Series are told apart by more than colour: on the ramps (mixes, block sizes) each
#    series has its own marker shape and neighbours differ in their dashes too.
def look(root, name):
    """(marker shape, dash pattern) of series name."""
    for g in root.iter("g"):
        if g.get("class") == "series" and g.get("data-series") == name:
            pt = [el for el in g if el.get("class") == "pt"][0]
            line = [el for el in g if el.tag in ("path", "polygon") and el.get("class") != "pt"][0]
            return pt.get("data-shape"), line.get("stroke-dasharray")
    return None
for ci, names in ((4, mixes), (6, sizes)):
    if ci < len(roots):
        looks = [look(roots[ci], n) for n in names]
        need(None not in looks, "%s: a series without markers" % charts[ci][0])
        shapes = [l[0] for l in looks if l]
        need(len(set(shapes[:7])) == 7, "%s: marker shapes %s repeat" % (charts[ci][0], shapes))
        need(all(a[1] != b[1] for a, b in zip(looks, looks[1:]) if a and b),
             "%s: neighbours share a dash pattern" % charts[ci][0])
        legend = [el for el in roots[ci].iter() if el.get("class") == "key"]
        need(len(legend) == len(names), "%s: %d legend markers for %d series" %
             (charts[ci][0], len(legend), len(names)))

# 5. Cells of a time series are marked where they begin and named; the last span ends
#    at the end mark.
if len(roots) > 10:
    marks = [(float(l.get("data-at")), l.get("data-label")) for l in roots[10].iter("line")
             if l.get("class") == "mark"]
    need(marks == [(1, "before the rebuild"), (600, "rebuilding"), (2100, "after the rebuild")],
         "rebuild phases marked %s" % marks)
    labels = [t.text for t in roots[10].iter("text") if t.get("class") == "mark-label"]
    need(labels == ["before the rebuild", "rebuilding", "after the rebuild"], "phase labels %s" % labels)
    need(sum(1 for l in roots[10].iter("line") if l.get("class") == "mark-end") == 1, "no end mark")
    need(not any(l.get("class") == "mark" for l in roots[9].iter("line")), "marks on a chart without cells")

if bad:
    print("FAIL report: " + "\n  ".join(b for b in bad if b))
    sys.exit(1)
print("ok report: %d charts, %d series, %d points, %d bytes" %
      (len(charts), sum(len(c[2]) for c in charts),
       sum(len(v) for c in charts for v in c[2].values()), len(doc)))
PY

chrome=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chrome" ] || { echo "skip: needs chromium (make deps installs it) to render the report"; exit 77; }
png=$work/report.png
timeout 180 "$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$work/profile" --window-size=1280,5200 \
    --screenshot="$png" "file://$html" >"$work/chromium.log" 2>&1
[ -s "$png" ] || { echo "FAIL: chromium wrote no screenshot"; tail -5 "$work/chromium.log"; exit 1; }
[ -n "${URAID_REPORT_KEEP:-}" ] && cp "$html" "$png" "$URAID_REPORT_KEEP"/

python3 - "$png" <<'PY'
import struct, sys, zlib
path = sys.argv[1]
d = open(path, "rb").read()
bad = []
if d[:8] != b"\x89PNG\r\n\x1a\n":
    print("FAIL png: not a PNG"); sys.exit(1)
pos, idat = 8, []
while pos < len(d):
    n, t = struct.unpack(">I4s", d[pos:pos + 8])
    body = d[pos + 8:pos + 8 + n]
    pos += 12 + n
    if t == b"IHDR":
        w, h, depth, ctype, _, _, inter = struct.unpack(">IIBBBBB", body)
    elif t == b"IDAT":
        idat.append(body)
if depth != 8 or ctype not in (2, 6) or inter:
    print("FAIL png: unexpected format (depth %d, colour type %d)" % (depth, ctype)); sys.exit(1)
bpp = 3 if ctype == 2 else 4
raw = zlib.decompress(b"".join(idat))
stride = w * bpp
prev = bytearray(stride)
colours = {}
p = 0
for y in range(h):
    f, line = raw[p], bytearray(raw[p + 1:p + 1 + stride])
    p += 1 + stride
    if f == 1:
        for i in range(bpp, stride): line[i] = (line[i] + line[i - bpp]) & 255
    elif f == 2:
        for i in range(stride): line[i] = (line[i] + prev[i]) & 255
    elif f == 3:
        for i in range(stride):
            line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
    elif f == 4:
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = line
    if y % 2 == 0:      # every other row is plenty to count colours
        for i in range(0, stride, bpp):
            k = bytes(line[i:i + 3])
            colours[k] = colours.get(k, 0) + 1
total = sum(colours.values())
top = max(colours.values())
def near(hexcol, tol=10):
    r, g, b = (int(hexcol[i:i + 2], 16) for i in (1, 3, 5))
    return sum(n for k, n in colours.items()
               if abs(k[0] - r) <= tol and abs(k[1] - g) <= tol and abs(k[2] - b) <= tol)
if len(d) < 100000: bad.append("only %d bytes" % len(d))
if (w, h) != (1280, 5200): bad.append("%dx%d instead of 1280x5200" % (w, h))
if len(colours) < 200: bad.append("only %d colours" % len(colours))
if top > 0.95 * total: bad.append("%.1f %% of the picture is one colour" % (100.0 * top / total))
# the first three series colours (lines, bars) and the radar's darkest ring
for col in ("#4e79a7", "#f28e2b", "#e15759", "#440154"):
    if near(col) < 200: bad.append("series colour %s hardly drawn (%d pixels)" % (col, near(col)))
if bad:
    print("FAIL png: " + "; ".join(bad)); sys.exit(1)
print("ok png: %dx%d, %d bytes, %d colours, background %.0f %%" %
      (w, h, len(d), len(colours), 100.0 * top / total))
PY
