#!/bin/bash
# uraid bench --html on real runs (tmpfs files, cells of 0.05..0.3 s): a
# queue-depth sweep, threads x queue depth, the 56-cell matrix, a drive-count
# sweep of RAID 5 against JBOD, a single mixed run and steady-state rounds,
# each with --json to stdout. python3 reads the report's inline SVGs back
# (every point carries data-x/data-y) and checks that the charts are those
# that fit the run and that their series and point values are the JSON's
# figures of the same run: IOPS, MiB/s, mean and p99 latency per cell, the
# percentiles, the one-second series; the key figures and the table agree
# too; the run description names host, date, kernel, version and command;
# nothing refers outside the file. Then headless Chromium renders one report
# (Debian package chromium; skipped without it). Nothing asserts on speed.
# The workloads use --seed=7 (printed on failure with the run's arguments).
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
[ -d /dev/shm ] && [ -w /dev/shm ] || { echo "skip: needs a writable /dev/shm"; exit 77; }
work=$(mktemp -d /dev/shm/uraid-bench-html.XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0
version=$("$URAID" --version | awk '{print $2}')

# report NAME KIND uraid-bench-args...: run with --json and --html, then check
report() {
    local name=$1 kind=$2
    shift 2
    local html=$work/$kind.html json=$work/$kind.json
    if ! "$URAID" bench --seed=7 --json --html="$html" "$@" >"$json" 2>"$work/err"; then
        echo "FAIL $name: $(tail -1 "$work/err") (args: --seed=7 $*)"; fails=$((fails + 1)); return
    fi
    python3 - "$name" "$kind" "$html" "$json" "$version" <<'PY' || { fails=$((fails + 1)); echo "  (args: --seed=7 $*)"; }
import json, math, re, sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

name, kind, hpath, jpath, version = sys.argv[1:6]
doc = open(hpath, encoding="utf-8").read()
d = json.load(open(jpath))
bad = []
def need(c, what):
    if not c:
        bad.append(what)

# ---- the file stands alone ----
for pat, what in ((r"https?:", "a URL"), (r"<script", "a script"), (r"<link", "a <link>"),
                  (r"<img", "an <img>"), (r"<iframe", "an <iframe>"), (r"@import", "@import"),
                  (r"\bsrc\s*=", "src="), (r"url\(\s*['\"]?(?!#)", "url()"),
                  (r"xlink:href", "xlink:href"), (r"href\s*=\s*['\"](?!#)", "href= outside")):
    m = re.search(pat, doc, re.I)
    need(not m, "%s: %r" % (what, doc[max(0, m.start() - 30):m.start() + 40]) if m else "")

class Page(HTMLParser):
    """The run description (th/td pairs of table.info), key figures, the results table."""
    def __init__(self):
        super().__init__()
        self.stack, self.cur, self.info, self.figs, self.rows = [], None, {}, [], []
        self.buf, self.key, self.row, self.in_info, self.in_data, self.fig = "", None, None, False, False, None
        self.tables, self.h3 = {}, ""       # data tables by their title: [header, row, ...]
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class") or ""
        if tag == "table":
            self.in_info, self.in_data = cls == "info", cls.split()[:1] == ["data"]
            if self.in_data:
                self.tables[self.h3] = []
        if tag in ("th", "td", "div", "h3"):
            self.buf = ""
        if tag == "tr" and self.in_data:
            self.row = []
        if tag == "div" and cls == "fig":
            self.fig = {}
        if tag == "div" and cls in ("v", "l") and self.fig is not None:
            self.cur = cls
    def handle_endtag(self, tag):
        if tag == "th" and self.in_info:
            self.key = self.buf.strip()
        elif tag == "td" and self.in_info and self.key:
            self.info[self.key] = self.buf.strip()
        elif tag in ("th", "td") and self.row is not None:
            self.row.append(self.buf.strip())
        elif tag == "tr" and self.row is not None:
            self.tables[self.h3].append(self.row)
            self.row = None
        elif tag == "h3":
            self.h3 = self.buf.strip()
        elif tag == "table":
            self.in_info = self.in_data = False
        elif tag == "div" and self.cur:
            self.fig[self.cur] = self.buf.strip()
            self.cur = None
            if len(self.fig) == 2:
                self.figs.append((self.fig["l"], self.fig["v"]))
                self.fig = None
    def handle_data(self, data):
        self.buf += data
p = Page()
p.feed(doc)
def table(start):
    """Rows (header first) of the table whose title starts with start."""
    for t, rows in p.tables.items():
        if t.startswith(start):
            return rows
    bad.append("no table %r (tables: %s)" % (start, sorted(p.tables)))
    return [[]]
p.rows = table("Every cell" if d.get("cells") else "Per direction")
for k in ("host", "date", "kernel", "uraid", "command", "targets", "workload", "run"):
    need(p.info.get(k), "run description without %r" % k)
need(p.info.get("uraid") == version, "version %r, uraid --version says %r" % (p.info.get("uraid"), version))
need("--html=" in p.info.get("command", "") and p.info.get("command", "").startswith("uraid bench "),
     "command line %r" % p.info.get("command"))
need(re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", p.info.get("date", "")), "date %r" % p.info.get("date"))
for path in d["paths"]:
    need(path in p.info.get("targets", ""), "targets do not name " + path)

# ---- the charts: title -> [(subtitle, kind, {series: [(x, y)]})] ----
charts = {}
for s in re.findall(r"<svg\b.*?</svg>", doc, re.S):
    try:
        root = ET.fromstring(s)
    except ET.ParseError as e:
        bad.append("svg not well-formed: %s" % e)
        continue
    series = {}
    series[None] = [(float(l.get("data-at")), l.get("data-label")) for l in root.iter("line")
                    if l.get("class") == "mark"]
    series[0] = root.get("data-kind")
    series[1] = [t.text for t in root.iter("text") if t.get("class") == "mark-label"]
    for g in root.iter("g"):
        if g.get("class") == "series":
            series[g.get("data-series")] = [(el.get("data-x"), float(el.get("data-y")))
                                            for el in g.iter() if el.get("data-x") is not None]
    charts.setdefault(root.find("title").text, []).append(series)

def chart(title, i=0):
    c = charts.get(title, [])
    need(len(c) > i, "no chart %r (charts: %s)" % (title, sorted(charts)))
    return {k: v for k, v in c[i].items() if k not in (None, 0, 1)} if len(c) > i else {}

def marks(title):
    """The cell boundaries of chart title: [(x, label)]."""
    c = charts.get(title, [])
    return c[0][None] if c else []

def kind_of(title):
    c = charts.get(title, [])
    return c[0][0] if c else None

def close(got, want, absol):
    return abs(got - want) <= absol + 1e-8 * abs(want)

def match(title, sname, want, absol=0.0, i=0, numeric_x=True):
    """Series sname of chart title plots exactly the points of want {x: y} (y None: left out)."""
    ser = chart(title, i).get(sname)
    if ser is None:
        bad.append("%s: no series %r (has %s)" % (title, sname, sorted(chart(title, i))))
        return
    got = {(float(x) if numeric_x else x): y for x, y in ser}
    exp = {x: y for x, y in want.items() if y is not None}
    need(set(got) == set(exp), "%s / %s: x %s, JSON has %s" % (title, sname, sorted(got), sorted(exp)))
    for x, y in exp.items():
        if x in got:
            need(close(got[x], y, absol), "%s / %s at %s: %.9g plotted, JSON %.9g" % (title, sname, x, got[x], y))

MIB = 1048576.0
def iops(r): return r["total"]["iops"]
def mib(r): return r["total"]["bw_bytes_per_s"] / MIB
def lat(r, k): return r["total"]["lat_ns"][k] if r["total"]["ios"] else None
PCT = ["p50", "p90", "p99", "p99.9", "p99.99", "p99.999"]
PKEY = ["p50", "p90", "p99", "p99_9", "p99_99", "p99_999"]
IOPS_ABS, MIB_ABS = 0.5, 0.5 / MIB    # the JSON rounds rates to whole units

def fig_value(label_start):
    """A key figure ("419 k IOPS", "1.5 ms", "0.52 × JBOD") as a number in base units."""
    for l, v in p.figs:
        if l.startswith(label_start):
            m = re.match(r"([\d.]+)\s*(k|M|G|ns|µs|ms|s)?", v)
            if m:
                mult = {"k": 1e3, "M": 1e6, "G": 1e9, "ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}
                return float(m.group(1)) * mult.get(m.group(2), 1)
    bad.append("no key figure %r (has %s)" % (label_start, [l for l, _ in p.figs]))
    return None

def near3(v, want):   # key figures show 3 significant digits
    return v is not None and abs(v - want) <= 0.006 * abs(want) + 0.5

def check_series(results, one):
    """The one-second series: for cells, end to end on one time axis (measured windows)."""
    t0, tot, lt, rd, wr = 0.0, {}, {}, {}, {}
    for r in results:
        for s in r["series"]:
            x = round(t0 + s["t_s"] + s["duration_ns"] / 2e9, 6)     # the middle of its window
            ios = s["read_ios"] + s["write_ios"]
            tot[x] = ios * 1e9 / s["duration_ns"]
            rd[x] = s["read_ios"] * 1e9 / s["duration_ns"]
            wr[x] = s["write_ios"] * 1e9 / s["duration_ns"]
            lt[x] = s["lat_mean_ns"] if ios else None
        t0 += r["runtime_ns"] / 1e9
    def rnd(dct): return {round(k, 6): v for k, v in dct.items()}
    sname = "total" if one else "all cells"
    if not one:
        # every cell begins where the one before it ended, named as in the table
        t, want = 0.0, []
        for r in results:
            if r["series"]:
                want.append((round(t, 6), r["label"]))
            t += r["runtime_ns"] / 1e9
        for title in ("IOPS over time", "Mean latency over time"):
            got = [(round(x, 6), l) for x, l in marks(title)]
            need(got == want, "%s: cell boundaries %s, JSON %s" % (title, got[:4], want[:4]))
    else:
        need(not marks("IOPS over time"), "a single run has no cell boundaries")
    ser = chart("IOPS over time").get(sname, [])
    got = {round(float(x), 6): y for x, y in ser}
    need(set(got) == set(tot), "IOPS over time: x %s, JSON %s" % (sorted(got), sorted(tot)))
    for x in tot:
        if x in got:
            need(close(got[x], tot[x], 1e-6), "IOPS over time at %s: %.9g, JSON %.9g" % (x, got[x], tot[x]))
    ser = chart("Mean latency over time").get(sname, [])
    got = {round(float(x), 6): y for x, y in ser}
    exp = {x: y for x, y in lt.items() if y}
    need(got == exp, "mean latency over time: %s, JSON %s" % (got, exp))
    if one and any(rd.values()) and any(wr.values()):
        for sn, dct in (("read", rd), ("write", wr)):
            ser = {round(float(x), 6): y for x, y in chart("IOPS over time").get(sn, [])}
            need(set(ser) == set(dct) and all(close(ser[x], dct[x], 1e-6) for x in dct),
                 "%s IOPS over time differ from the JSON" % sn)

def check_table(cells):
    need(p.rows[0][-1:] == ["CPU %"], "results table header %s: no CPU %% column" % p.rows[:1])
    rows = [r for r in p.rows if r and r[0] != "cell"]
    need([r[0] for r in rows] == [c["label"] for c in cells], "table rows %s" % [r[0] for r in rows])
    for r, c in zip(rows, cells):
        if "skipped" in c:
            need(r[1].startswith("skipped"), c["label"] + ": not shown as skipped")
        else:
            need(abs(float(r[1]) - iops(c)) <= 1, "%s: table IOPS %s, JSON %d" % (c["label"], r[1], iops(c)))
            cpu = (c["cpu"]["user_ns"] + c["cpu"]["sys_ns"]) * 100.0 / c["runtime_ns"]
            need(abs(float(r[-1]) - cpu) <= 0.051, "%s: CPU %s %%, JSON %.2f" % (c["label"], r[-1], cpu))
    # reads and writes apart, when some cell does both
    mixed = [c for c in cells if "skipped" not in c and c["read"]["ios"] and c["write"]["ios"]]
    need(bool(mixed) == any(t.startswith("Reads and writes apart") for t in p.tables),
         "a read/write table where %d cells mix" % len(mixed))
    if mixed:
        split = {r[0]: r for r in table("Reads and writes apart")[1:]}
        for c in mixed:
            r = split.get(c["label"], [""] * 9)
            need(r[1:2] and abs(float(r[1]) - c["read"]["iops"]) <= 1 and
                 abs(float(r[5]) - c["write"]["iops"]) <= 1,
                 "%s: read/write IOPS %s, JSON %d/%d" % (c["label"], r[1:2] + r[5:6],
                                                        c["read"]["iops"], c["write"]["iops"]))

def size(b):
    """A size as every label, legend and table of the report writes it."""
    for div, unit in ((MIB, "MiB"), (1024.0, "KiB"), (1.0, "B")):
        if b >= div or unit == "B":
            return ("%.3g" % (b / div)).rstrip("0").rstrip(".") + " " + unit

# ---- the workload as run: its access specification, line by line ----
acc = table("Access specification")
if "access" in d["workload"]:
    need(acc[0][:5] == ["line", "share of I/Os", "block size", "reads", "random"], "access header %s" % acc[0])
    need(len(acc) - 1 == len(d["workload"]["access"]), "access rows %s" % acc[1:])
    for r, a in zip(acc[1:], d["workload"]["access"]):
        bs = size(a["bs_bytes"]) if kind != "matrix" else "swept: 512 B … 1 MiB"
        need(r[1:5] == ["%d %%" % a["pct"], bs, "%d %%" % a["read_pct"] if kind != "matrix"
                        else "swept: 100 … 0 %", "%d %%" % a["random_pct"]],
             "access line %s, JSON %s" % (r, a))
wk = {r[0]: r[1] for r in table("What each worker does")[1:]}
need(wk.get("workload") == d["workload"]["description"], "workload %r" % wk.get("workload"))
need(wk.get("queue depth", "").startswith("swept" if kind in ("qd", "threads") else "%d" % d["workload"]["iodepth"]),
     "queue depth %r" % wk.get("queue depth"))
need("workers" in wk and "runtime" in wk, "workers and runtime %s" % wk)
need(kind_of("Latency percentiles") == "points", "percentiles drawn as %s, not points" % kind_of("Latency percentiles"))

cells = d.get("cells", [])
ran = [c for c in cells if "skipped" not in c]
if kind in ("qd", "threads"):
    by_jobs = {}
    for c in ran:
        by_jobs.setdefault(c["numjobs"], []).append(c)
    for jobs, cs in by_jobs.items():
        sname = "%d worker%s" % (jobs, "" if jobs == 1 else "s")
        match("IOPS vs queue depth", sname, {float(c["iodepth"]): iops(c) for c in cs}, IOPS_ABS)
        match("Latency vs queue depth", sname + " mean", {float(c["iodepth"]): lat(c, "mean") for c in cs})
        match("Latency vs queue depth", sname + " p99", {float(c["iodepth"]): lat(c, "p99") for c in cs})
    need(len(chart("IOPS vs queue depth")) == len(by_jobs), "a series per thread count")
    if kind == "qd":
        need(near3(fig_value("X-bit rating"), d["xbit_rating"]["iops"]), "X-bit figure")
    best = max(ran, key=iops)
    need(near3(fig_value("highest IOPS"), iops(best)), "highest IOPS figure")
elif kind == "matrix":
    mixes = sorted({c["cell_read_pct"] for c in cells}, reverse=True)
    sizes = sorted({c["cell_bs_bytes"] for c in cells})
    sz = size
    need(len(mixes) == 7 and len(sizes) == 8, "matrix axes")
    need(all(c["label"] == "bs=%s read=%d%%" % (size(c["cell_bs_bytes"]), c["cell_read_pct"])
             for c in cells), "matrix labels %s" % [c["label"] for c in cells[:3]])
    need("1 MiB" in chart("IOPS by read/write mix and block size"), "no 1 MiB in the radar's legend")
    # 56 cells in the time series: named by block size once each, every cell on hover
    groups = charts.get("IOPS over time", [{}])[0].get(1)
    need(groups == [size(b) for b in sizes], "time series groups %s" % groups)
    for m in mixes:
        mn = "%d/%d R/W" % (m, 100 - m)
        cs = [c for c in ran if c["cell_read_pct"] == m]
        # a log axis leaves out a cell that completed nothing
        match("IOPS vs block size by read/write mix", mn,
              {float(c["cell_bs_bytes"]): iops(c) or None for c in cs}, IOPS_ABS)
        match("MiB/s vs block size by read/write mix", mn,
              {float(c["cell_bs_bytes"]): mib(c) or None for c in cs}, MIB_ABS)
    for b in sizes:
        cs = [c for c in ran if c["cell_bs_bytes"] == b]
        match("IOPS by read/write mix and block size", sz(b),
              {"%d/%d R/W" % (c["cell_read_pct"], 100 - c["cell_read_pct"]): iops(c) for c in cs},
              IOPS_ABS, numeric_x=False)
        match("MiB/s by read/write mix and block size", sz(b),
              {"%d/%d R/W" % (c["cell_read_pct"], 100 - c["cell_read_pct"]): mib(c) for c in cs},
              MIB_ABS, numeric_x=False)
    for c in ran:
        if c["cell_bs_bytes"] == 4096 and c["total"]["ios"]:
            match("Latency percentiles", "4 KiB, %d/%d R/W" % (c["cell_read_pct"], 100 - c["cell_read_pct"]),
                  dict(zip(PCT, (c["total"]["lat_ns"][k] for k in PKEY))), numeric_x=False)
elif kind == "drives":
    arr = [c for c in ran if c["cell_config"] == "array"]
    jb = [c for c in ran if c["cell_config"] == "jbod"]
    for title, f, a in (("IOPS vs drive count", iops, IOPS_ABS), ("MiB/s vs drive count", mib, MIB_ABS),
                        ("Mean latency vs drive count", lambda c: lat(c, "mean"), 0)):
        match(title, "raid5, chunk 64 KiB", {float(c["cell_drives"]): f(c) for c in arr}, a)
        match(title, "JBOD (each drive alone)", {float(c["cell_drives"]): f(c) for c in jb}, a)
    last = arr[-1]
    base = [c for c in jb if c["cell_drives"] == last["cell_drives"]][0]
    v = fig_value("%s against %s" % (last["label"], base["label"]))
    need(v is not None and abs(v - iops(last) / iops(base)) <= 0.006 * v + 0.001, "× JBOD figure %s" % v)
elif kind == "steady":
    ss = d["steady_state"]
    match("Steady state: IOPS per round", "IOPS per round",
          {float(i + 1): iops(c) for i, c in enumerate(cells)}, IOPS_ABS)
    if len(cells) >= 5:
        match("Steady state: IOPS per round", "window mean",
              {float(i + 1): ss["window_mean_iops"] for i in range(len(cells) - 5, len(cells))}, 0.5)
        # the least-squares line through the window, as SNIA plots it (mean and slope
        # are rounded to whole IOPS in the JSON)
        match("Steady state: IOPS per round", "least-squares fit",
              {float(len(cells) - 5 + k + 1): ss["window_mean_iops"] +
               ss["window_slope_iops_per_round"] * (k - 2) for k in range(5)}, 0.5 + 2 * 0.5)
elif kind == "single":
    for dn in ("read", "write", "total"):
        if d["read"]["ios"] and d["write"]["ios"] or dn != "total":
            if d[dn]["ios"]:
                match("Latency percentiles", dn, dict(zip(PCT, (d[dn]["lat_ns"][k] for k in PKEY))),
                      numeric_x=False)
    need(near3(fig_value("IOPS"), d["total"]["iops"]), "IOPS figure")
    if d["read"]["ios"] and d["write"]["ios"]:
        need(near3(fig_value("read IOPS"), d["read"]["iops"]), "read IOPS figure")
        need(near3(fig_value("write IOPS"), d["write"]["iops"]), "write IOPS figure")
        per = {r[0]: r for r in p.rows[1:]}
        need(set(per) == {"read", "write", "total"}, "per direction rows %s" % sorted(per))
        cpu = (d["cpu"]["user_ns"] + d["cpu"]["sys_ns"]) * 100.0 / d["runtime_ns"]
        need(per.get("total", [""])[-1:] and abs(float(per["total"][-1]) - cpu) <= 0.051,
             "total CPU %s, JSON %.2f" % (per.get("total"), cpu))
    need(near3(fig_value("99th percentile latency"), d["total"]["lat_ns"]["p99"]), "p99 figure")

if kind in ("qd", "threads", "drives", "steady"):
    for c in ran:
        if c["total"]["ios"] and (kind != "steady" or c in cells[-5:]):
            match("Latency percentiles", c["label"], dict(zip(PCT, (c["total"]["lat_ns"][k] for k in PKEY))),
                  numeric_x=False)
if cells:
    check_series(ran, False)
    check_table(cells)
else:
    check_series([d], True)

if bad:
    print("FAIL %s: %s" % (name, "\n  ".join(b for b in bad if b)))
    sys.exit(1)
npts = sum(len(v) for cs in charts.values() for c in cs for v in c.values())
print("ok %s: %d charts, %d points match the JSON, %d bytes" %
      (name, sum(len(c) for c in charts.values()), npts, len(doc)))
PY
}

f=$work/s.img
report "qd sweep" qd --rw=randread --sweep=qd=1..8 --runtime=0.2 --size=16M "$f"
report "threads x qd" threads --rw=randread --sweep=threads=1,2 --sweep=qd=1,4 --runtime=0.1 "$f"
report "matrix" matrix --sweep=matrix --iodepth=4 --runtime=0.05 --force-write "$f"
report "drives" drives --array --level=5 --chunk=64K --member-size=16M --sweep=drives=1..3 \
    --rw=randwrite --iodepth=4 --runtime=0.2 "$work/d0" "$work/d1" "$work/d2"
report "single" single --rw=randrw --iodepth=4 --runtime=1.2 --force-write "$f"
report "steady state" steady --rw=randread --steady-state=6 --runtime=0.1 "$f"

# the folder of --html is checked before the run, with one line
out=$("$URAID" bench --html=/nonexistent/r.html --runtime=0.05 "$f" 2>&1)
if [ $? -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then echo "ok: refused $out"
else echo "FAIL: --html into a missing folder: $out"; fails=$((fails + 1)); fi

chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
    echo "skip: rendering (needs chromium; make deps installs it)"
elif [ -s "$work/drives.html" ]; then
    png=$work/drives.png
    timeout 180 "$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$work/profile" --window-size=1280,3000 \
        --screenshot="$png" "file://$work/drives.html" >"$work/chromium.log" 2>&1
    [ -n "${URAID_REPORT_KEEP:-}" ] && cp "$work"/*.html "$png" "$URAID_REPORT_KEEP"/
    # a real picture: big enough, and the first series colour and the JBOD line drawn
    if python3 - "$png" <<'PY'; then :; else fails=$((fails + 1)); fi
import struct, sys, zlib
d = open(sys.argv[1], "rb").read() if __import__("os").path.exists(sys.argv[1]) else b""
if d[:8] != b"\x89PNG\r\n\x1a\n":
    print("FAIL png: chromium wrote no PNG"); sys.exit(1)
pos, idat = 8, []
while pos < len(d):
    n, t = struct.unpack(">I4s", d[pos:pos + 8])
    if t == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", d[pos + 8:pos + 18])
    elif t == b"IDAT":
        idat.append(d[pos + 8:pos + 8 + n])
    pos += 12 + n
bpp = {2: 3, 6: 4}.get(ctype)
if depth != 8 or not bpp:
    print("FAIL png: format"); sys.exit(1)
raw, stride = zlib.decompress(b"".join(idat)), w * bpp
prev, cols, p = bytearray(stride), {}, 0
for y in range(h):
    f, line = raw[p], bytearray(raw[p + 1:p + 1 + stride])
    p += 1 + stride
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = line
    if y % 3 == 0:
        for i in range(0, stride, bpp):
            k = bytes(line[i:i + 3])
            cols[k] = cols.get(k, 0) + 1
def near(hx, tol=12):
    r, g, b = (int(hx[i:i + 2], 16) for i in (1, 3, 5))
    return sum(n for k, n in cols.items() if abs(k[0] - r) <= tol and abs(k[1] - g) <= tol and abs(k[2] - b) <= tol)
bad = []
if (w, h) != (1280, 3000): bad.append("%dx%d" % (w, h))
if len(cols) < 100: bad.append("only %d colours" % len(cols))
if near("#4e79a7") < 100: bad.append("the first series colour hardly drawn")
if near("#333333", 30) < 100: bad.append("the JBOD line and text hardly drawn")
if bad:
    print("FAIL png: " + "; ".join(bad)); sys.exit(1)
print("ok png: %dx%d, %d colours" % (w, h, len(cols)))
PY
fi
[ $fails -eq 0 ] && echo "all report checks passed"
[ $fails -eq 0 ]
