#!/bin/bash
# uraid serve --metrics: the HTTP server first stands up to what an attacker
# can do from the port (a client that sends its request slowly, one with a
# huge header, garbage bytes, more clients than slots, other methods and
# paths), each answered with its status and closed while scrapes and the
# control socket go on being served, no descriptor left behind; then the
# text is checked as Prometheus' format wants it (every family typed once,
# counters ending in _total, histogram buckets cumulative; promtool check
# metrics; a member path with a quote, a backslash, a newline and a byte that
# is not UTF-8), the families against the man page's list both ways, the
# control verb `metrics` answers the same
# families, an array served write-back shows its write cache's families
# (writes counted as cached, their bytes dirty or destaged, none dirty after
# a FLUSH), and a real Prometheus scrapes the server: a member's write
# counter grows after writes through the export, and the degraded-slot gauge
# reads 1 after `uraid fail`.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
need python3 nbdcopy
PROMETHEUS=${PROMETHEUS:-/usr/bin/prometheus}
work_dir metrics
echo "work in $work"
ppid_= hpid=
trap 'for p in $spid $ppid_ $hpid $(jobs -p); do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"' EXIT

# the first member's path has a quote, a backslash and a byte that is not
# UTF-8: its label must be escaped and still valid UTF-8 (a tab or newline
# cannot reach a label: serve refuses such member paths)
odd=$'d0"q\\bn\xff'
m=("$work/$odd" "$work/d1" "$work/d2")
truncate -s 16M "${m[@]}"
"$URAID" create --level=5 --raid-devices=3 --name=m --run "${m[@]}" >/dev/null || exit 1
serve_bg "$work" m --metrics=127.0.0.1:0 "${m[@]}" || exit 1
port=$(sed -n 's|^uraid serve: metrics on http://127\.0\.0\.1:\([0-9]*\)/metrics$|\1|p' "$work/m.out")
check "serve announces the metrics port it chose ($port)" test -n "$port"
[ -n "$port" ] || { cat "$work/m.out" "$work/m.err"; exit 1; }

# refusals: one line, nothing served
n=("$work/e0" "$work/e1")
truncate -s 16M "${n[@]}"
"$URAID" create --level=1 --raid-devices=2 --name=e --run "${n[@]}" >/dev/null || exit 1
out=$("$URAID" serve --socket="$work/e.sock" --metrics=127.0.0.1:70000 "${n[@]}" 2>&1); rc=$?
check "--metrics with a port over 65535: one line, exit 2 ($out)" \
    bash -c "[ $rc -eq 2 ] && [ \$(wc -l <<<\"\$0\") -eq 1 ] && grep -q 'PORT 0..65535' <<<\"\$0\"" "$out"
out=$("$URAID" serve --socket="$work/e.sock" --metrics="127.0.0.1:$port" "${n[@]}" 2>&1); rc=$?
check "--metrics on a port in use: exit 1, nothing served ($out)" \
    bash -c "[ $rc -eq 1 ] && grep -q 'metrics=127.0.0.1:$port' <<<\"\$0\" && ! grep -q 'export' <<<\"\$0\" && [ ! -e '$work/e.sock' ]" "$out"

# The HTTP client of the checks: http.py PORT CASE [ARGS]; exit 0 when the
# server answered as the case wants, else the reason.
cat >"$work/http.py" <<'PY'
import socket, sys, time
port, case = int(sys.argv[1]), sys.argv[2]

def conn():
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    return s

def answer(s, head=False):
    """Everything until the server closes: (status, headers dict, body)."""
    data = b""
    while True:
        try:
            part = s.recv(65536)
        except ConnectionResetError:
            break
        if not part:
            break
        data += part
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    if not lines[0].startswith("HTTP/1.1 "):
        raise SystemExit("no status line: %r" % data[:200])
    status = int(lines[0].split()[1])
    headers = {}
    for l in lines[1:]:
        k, _, v = l.partition(":")
        headers[k.strip().lower()] = v.strip()
    if "content-length" in headers and not head:
        if int(headers["content-length"]) != len(body):
            raise SystemExit("Content-Length %s, body %d bytes" % (headers["content-length"], len(body)))
    if headers.get("connection") != "close":
        raise SystemExit("no Connection: close: %r" % headers)
    return status, headers, body

def send(raw):
    s = conn()
    s.sendall(raw)
    return answer(s, raw.startswith(b"HEAD "))

def expect(raw, want):
    st, h, body = send(raw)
    if st != want:
        raise SystemExit("status %d, expected %d (%r)" % (st, want, body[:100]))
    return h, body

if case == "get":             # ARGS: file for the body
    h, body = expect(b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n", 200)
    if h.get("content-type") != "text/plain; version=0.0.4; charset=utf-8":
        raise SystemExit("Content-Type %r" % h.get("content-type"))
    open(sys.argv[3], "wb").write(body)
elif case == "others":
    # HTTP/1.0, bare LF line ends, a query string
    expect(b"GET /metrics?x=1 HTTP/1.0\n\n", 200)
    h, body = expect(b"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 200)
    if body or int(h.get("content-length", "0")) < 1000:
        raise SystemExit("HEAD: body %d bytes, Content-Length %r" % (len(body), h.get("content-length")))
    h, _ = expect(b"POST /metrics HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd", 405)
    if h.get("allow") != "GET, HEAD":
        raise SystemExit("Allow: %r" % h.get("allow"))
    expect(b"DELETE /metrics HTTP/1.1\r\n\r\n", 405)
    expect(b"GET /metrics/../etc/passwd HTTP/1.1\r\n\r\n", 404)
    expect(b"GET / HTTP/1.1\r\n\r\n", 404)
elif case == "garbage":       # each answered 400 and closed
    for raw in (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(256)),
                b"HELLO\r\n\r\n", b"\r\n\r\n",
                b"GET /metrics HTTP/2.0\r\n\r\n", b"GET  /metrics HTTP/1.1\r\n\r\n",
                b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n",
                b"GET /metrics HTTP/1.1\r\nX: a\x01b\r\n\r\n",
                b"G(T /metrics HTTP/1.1\r\n\r\n", b"GET metrics HTTP/1.1\r\n\r\n"):
        try:
            expect(raw, 400)
        except SystemExit as e:
            raise SystemExit("%r: %s" % (raw[:40], e))
elif case == "huge":          # a head that never ends within 8 KiB
    expect(b"GET /metrics HTTP/1.1\r\nX-Long: " + b"a" * 9000 + b"\r\n\r\n", 431)
    expect(b"GET /metrics HTTP/1.1\r\n" + b"X: y\r\n" * 2000, 431)
elif case == "slow":
    # a byte every half second, never done; a whole scrape on another
    # connection after the first bytes; prints: its status, the time until
    # the first byte of the answer came, the other scrape's status
    import select
    s = conn()
    t = time.monotonic()
    other, first = None, None
    try:
        for i, b in enumerate(b"GET /metrics HTTP/1.1\r\nHost: slow"):
            s.send(bytes([b]))
            if select.select([s], [], [], 0.5)[0]:
                break                   # the answer has begun
            if i == 3:
                other = send(b"GET /metrics HTTP/1.1\r\n\r\n")[0]
        select.select([s], [], [], 30)
        first = time.monotonic() - t
    except OSError:
        pass
    st, _, _ = answer(s)
    print("%d %s %s" % (st, "%.1f" % first if first is not None else "none", other))
elif case == "hold":
    # N silent clients, then one more: prints its status, then theirs
    socks = [conn() for _ in range(int(sys.argv[3]))]
    time.sleep(0.3)                     # accepted by now
    try:
        extra = send(b"GET /metrics HTTP/1.1\r\n\r\n")[0]
    except SystemExit as e:
        extra = str(e)
    print(extra, " ".join(str(answer(s)[0]) for s in socks))
else:
    raise SystemExit("unknown case " + case)
PY
http() { python3 "$work/http.py" "$port" "$@"; }

# ---- the attacker's side ----
fd_count() { ls "/proc/$spid/fd" | wc -l; }
fds_before=$(fd_count)
check "GET /metrics: 200, Prometheus' content type, Content-Length, Connection: close" \
    http get "$work/first.txt"
check "HTTP/1.0 with LF line ends: 200; HEAD: the headers only; POST, DELETE: 405 with Allow: GET, HEAD; other paths: 404" \
    http others
check "garbage (a TLS hello, NUL bytes, no request line, HTTP/2, bad spacing, bad headers): 400" \
    http garbage
check "a head over 8 KiB: 431" http huge

# a slow client holds its slot while the others go on being served, and
# gets 408 once the request time limit is up
http slow >"$work/slow.res" 2>&1 &
slowpid=$!
check "uraid status answers while it sends" bash -c "'$URAID' status m >/dev/null"
wait "$slowpid"
check "a client sending its request a byte every half second gets 408 once the 5 s head limit is up \
(its first byte after 4.5 to 8 s), a scrape meanwhile 200 ($(cat "$work/slow.res"))" \
    bash -c "awk '{ exit !(\$1 == 408 && \$2 >= 4.5 && \$2 <= 8 && \$3 == 200) }' '$work/slow.res'"

# more clients than slots: 8 silent ones hold them all, the 9th gets 503, and
# they get 408 in time
http hold 8 >"$work/hold.res" 2>&1 &
hpid=$!
check "the control socket is served meanwhile" bash -c "'$URAID' status m >/dev/null"
wait "$hpid"; hpid=
check "a 9th client while 8 silent ones hold every slot: 503; theirs 408 ($(cat "$work/hold.res"))" \
    bash -c "[ \"\$(cat '$work/hold.res')\" = '503 408 408 408 408 408 408 408 408' ]"
check "the slots are free again afterwards" http get "$work/after.txt"
# every client's descriptor is closed (a lingering one within a second or so)
for _ in $(seq 300); do [ "$(fd_count)" -le "$fds_before" ] && break; sleep 0.1; done
check "the server holds as many descriptors as before the attacks ($fds_before, now $(fd_count))" \
    test "$(fd_count)" -eq "$fds_before"

# ---- what the text says ----
cat >"$work/format.py" <<'PY'
"""Check an exposition text as Prometheus' format (0.0.4) and conventions
want it; print the family names (one per line)."""
import re, sys
text = open(sys.argv[1]).read()
name_re = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
label_re = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)"(,|$)')
types, helps, fam_done, cur = {}, set(), set(), None
hist = {}
def fail(msg):
    raise SystemExit("%s: %s" % (sys.argv[1], msg))
for line in text.split("\n")[:-1]:
    if line.startswith("# HELP "):
        n = line.split()[2]
        if n in helps: fail("HELP of %s twice" % n)
        helps.add(n)
        continue
    if line.startswith("# TYPE "):
        _, _, n, t = line.split(" ")
        if n in types: fail("TYPE of %s twice" % n)
        if t not in ("gauge", "counter", "histogram"): fail("type %s" % t)
        if cur: fam_done.add(cur)
        types[n], cur = t, n
        if not n.startswith("uraid_"): fail("%s: no uraid_ prefix" % n)
        if t == "counter" and not n.endswith("_total"): fail("counter %s without _total" % n)
        if t != "counter" and n.endswith("_total"): fail("%s %s ends in _total" % (t, n))
        continue
    m = name_re.match(line)
    if not m: fail("not a sample: %r" % line)
    name, labels, value = m.group(1), m.group(3) or "", m.group(4)
    float(value)
    fam = name
    if cur and types[cur] == "histogram" and name in (cur + "_bucket", cur + "_sum", cur + "_count"):
        fam = cur
    if fam != cur: fail("sample %s outside its family's group (after TYPE %s)" % (name, cur))
    lab = dict((k, v) for k, v, _ in label_re.findall(labels))
    if labels and ",".join('%s="%s"' % kv for kv in lab.items()) != labels:
        fail("labels do not parse: %r" % labels)
    if "array" not in lab or "uuid" not in lab: fail("%s without array and uuid" % name)
    if fam in types and types[fam] == "histogram":
        key = tuple(sorted((k, v) for k, v in lab.items() if k != "le"))
        h = hist.setdefault((fam, key), {"b": [], "count": None})
        if name.endswith("_bucket"): h["b"].append((lab["le"], float(value)))
        elif name.endswith("_count"): h["count"] = float(value)
for n in helps:
    if n not in types: fail("HELP without TYPE: %s" % n)
for n in types:
    if n not in helps: fail("TYPE without HELP: %s" % n)
if not hist: fail("no histogram")
for (fam, key), h in hist.items():
    les = [float("inf") if le == "+Inf" else float(le) for le, _ in h["b"]]
    counts = [c for _, c in h["b"]]
    if les != sorted(les) or les[-1] != float("inf"): fail("%s %s: le not ascending to +Inf" % (fam, key))
    if any(b < a for a, b in zip(counts, counts[1:])): fail("%s %s: buckets not cumulative" % (fam, key))
    if h["count"] != counts[-1]: fail("%s %s: _count %s, +Inf %s" % (fam, key, h["count"], counts[-1]))
print("\n".join(sorted(types)))
PY
randfile 1 1048576 "$work/rand"
check "1 MiB written through the export (nbdcopy)" \
    nbdcopy "$work/rand" "nbd+unix:///m?socket=$work/m.sock"
sleep 1.2       # the page is read at most once a second: one that counts the writes
check "a scrape after the writes" http get "$work/written.txt"
check "the text follows Prometheus' format and conventions" \
    bash -c "python3 '$work/format.py' '$work/written.txt' >'$work/families.txt'"
if command -v promtool >/dev/null; then
    check "promtool check metrics accepts the scrape" \
        bash -c "promtool check metrics <'$work/written.txt'"
else
    echo "promtool not installed (make deps installs Debian's package prometheus): not run"
fi
check "the odd member path's label: quote and backslash escaped, the 0xff byte as U+FFFD" \
    python3 -c '
import sys
t = open(sys.argv[1], "rb").read()
want = b"member=\"" + sys.argv[2].encode() + b"/d0\\\"q\\\\bn\xef\xbf\xbd\""
assert want in t, want
' "$work/written.txt" "$work"
# the families the man page lists (.B and .BR lines of its METRICS section)
export LC_ALL=C         # sort and comm in the order format.py sorts
man=$(dirname "$0")/../../docs/uraid.8
sed -n '/^\.SH METRICS/,/^\.SH [^M]/p' "$man" | grep -E '^\.BR? uraid_' |
    grep -oE 'uraid_[a-z0-9_]+' | sort -u >"$work/documented.txt"
check "the man page lists families ($(wc -l <"$work/documented.txt"))" \
    test "$(wc -l <"$work/documented.txt")" -ge 30
check "every family the man page lists is there ($(wc -l <"$work/families.txt") families; \
bitmap ones only with a bitmap): $(comm -23 "$work/documented.txt" "$work/families.txt" | tr '\n' ' ')" \
    bash -c "! comm -23 '$work/documented.txt' '$work/families.txt' | grep -v '^uraid_array_bitmap_'"
check "every family there is in the man page: $(comm -13 "$work/documented.txt" "$work/families.txt" | tr '\n' ' ')" \
    bash -c "[ -z \"\$(comm -13 '$work/documented.txt' '$work/families.txt')\" ]"
check "the write histogram counted the writes, in 1 us .. 67 s buckets; a member's written bytes grew" \
    python3 -c '
import re, sys
t = open(sys.argv[1]).read()
c = re.search(r"uraid_request_duration_seconds_count\{[^}]*kind=\"write\"\} (\d+)", t)
assert c and int(c.group(1)) > 0, "no writes counted"
assert re.search(r"le=\"1e-06\"", t) and re.search(r"le=\"67.108864\"", t), "bucket bounds"
w = re.search(r"uraid_member_written_bytes_total\{[^}]*member=\"%s\",slot=\"1\"\} (\d+)" % re.escape(sys.argv[2]), t)
assert w and int(w.group(1)) >= 1048576 // 2, w and w.group(0)
' "$work/written.txt" "$work/d1"

# the control verb answers the same families
python3 - "$work/m.sock.ctl" >"$work/ctl.txt" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall(b"metrics\n")
data = b""
while True:
    part = s.recv(65536)
    if not part:
        break
    data += part
head = b"uraid-ctl 1\nok\n"
assert data.startswith(head), data[:100]
sys.stdout.write(data[len(head):].decode())
PY
check "the control verb metrics answers the same families in the same format" \
    bash -c "python3 '$work/format.py' '$work/ctl.txt' | diff - '$work/families.txt'"

# ---- uraid monitor --metrics: every served array's metrics in one page ----
"$URAID" monitor --no-syslog --delay=60 --metrics=127.0.0.1:0 >"$work/mon.out" 2>"$work/mon.err" &
mpid=$!
mport=
for _ in $(seq 100); do
    mport=$(sed -n 's|^uraid monitor: metrics on http://127\.0\.0\.1:\([0-9]*\)/metrics$|\1|p' "$work/mon.out")
    [ -n "$mport" ] && break
    sleep 0.1
done
python3 - "$mport" >"$work/mon.txt" 2>&1 <<'PY'
import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=10).read().decode())
PY
check "monitor --metrics: one page with the served array's samples (port ${mport:-none})" \
    bash -c "grep -qx 'uraid_served_arrays 1' '$work/mon.txt' &&
             grep -q '^uraid_member_writes_total{array=\"m\"' '$work/mon.txt' &&
             [ \$(grep -c '^# TYPE uraid_member_writes_total ' '$work/mon.txt') = 1 ]"
check "monitor --metrics and the server's own page list the same families" \
    bash -c "diff <(grep '^# TYPE ' '$work/mon.txt' | cut -d' ' -f3 | grep -vx uraid_served_arrays | sort) <(sort '$work/families.txt')"
kill "$mpid"; wait "$mpid" 2>/dev/null
check "monitor --metrics with --oneshot is refused in one line" \
    bash -c "! '$URAID' monitor --oneshot --metrics=127.0.0.1:0 2>'$work/mon1.err' && [ \$(wc -l <'$work/mon1.err') = 1 ]"

# ---- the write cache's families on a write-back array ----
# 64 distinct 4 KiB blocks written without a flush: each is counted as a
# cached write and its bytes are dirty or destaged; after a FLUSH none is
# dirty and all were destaged
wc=("$work/w0" "$work/w1" "$work/w2")
truncate -s 16M "${wc[@]}"
"$URAID" create --level=5 --raid-devices=3 --name=wc --run --assume-clean "${wc[@]}" >/dev/null || exit 1
mpid_=$spid
serve_bg "$work" wc --write-cache=back --cache-size=8M --metrics=127.0.0.1:0 "${wc[@]}" || exit 1
wspid=$spid spid=$mpid_
wport=$(sed -n 's|^uraid serve: metrics on http://127\.0\.0\.1:\([0-9]*\)/metrics$|\1|p' "$work/wc.out")
cat >"$work/wc.py" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[1])
from nbd_wire import CMD_FLUSH, CMD_WRITE, connect, go, reply, request
s = connect(sys.argv[2])
go(s)
if sys.argv[3] == "write":
    for i in range(64):
        request(s, CMD_WRITE, i * 8192, 4096, i + 1, payload=os.urandom(4096))
        assert reply(s)[0] == 0, "write %d" % i
else:
    request(s, CMD_FLUSH, 0, 0, 1)
    assert reply(s)[0] == 0, "flush"
PY
# wc_metric NAME [LABELS]: its value on a fresh scrape of the write-back array
wc_scrape() { sleep 1.2; python3 "$work/http.py" "$wport" get "$work/wc.txt"; }
wc_metric() { sed -n "s/^$1{array=\"wc\",uuid=\"[^\"]*\"${2:+,$2}} //p" "$work/wc.txt"; }
check "64 writes of 4 KiB through the write-back export, no flush" \
    python3 "$work/wc.py" "$(dirname "$0")/lib" "$work/wc.sock" write
wc_scrape
check "its page follows Prometheus' format too" \
    bash -c "python3 '$work/format.py' '$work/wc.txt' | diff - '$work/families.txt'"
d=$(wc_metric uraid_write_cache_dirty_bytes) s=$(wc_metric uraid_write_cache_destaged_bytes_total)
check "policy back 1, through 0; size 8 MiB ($(wc_metric uraid_write_cache_size_bytes))" \
    test "$(wc_metric uraid_write_cache_policy 'policy="back"')$(wc_metric uraid_write_cache_policy 'policy="through"')$(wc_metric uraid_write_cache_size_bytes)" = 108388608
check "64 cached writes counted ($(wc_metric uraid_write_cache_writes_cached_total)); their 256 KiB dirty or destaged (dirty $d, destaged $s)" \
    bash -c "[ '$(wc_metric uraid_write_cache_writes_cached_total)' -ge 64 ] && [ $((${d:-0} + ${s:-0})) -ge 262144 ]"
check "a FLUSH through the export" python3 "$work/wc.py" "$(dirname "$0")/lib" "$work/wc.sock" flush
wc_scrape
d=$(wc_metric uraid_write_cache_dirty_bytes) s=$(wc_metric uraid_write_cache_destaged_bytes_total)
check "after it: no dirty bytes ($d), 256 KiB destaged at least ($s), no destage errors" \
    bash -c "[ '$d' = 0 ] && [ '${s:-0}' -ge 262144 ] && [ '$(wc_metric uraid_write_cache_destage_errors_total)' = 0 ]"
check "the write-through array says policy through" \
    grep -q '^uraid_write_cache_policy{array="m",[^}]*policy="through"} 1$' "$work/written.txt"
"$URAID" stop wc >/dev/null; wait "$wspid"

# ---- a real Prometheus scrapes it ----
if [ ! -x "$PROMETHEUS" ]; then
    echo "prometheus not installed (make deps installs Debian's package prometheus)"
    [ $fails -eq 0 ] || exit 1
    exit 77
fi
pport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: uraid
    static_configs:
      - targets: ['127.0.0.1:$port']
EOF
"$PROMETHEUS" --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address="127.0.0.1:$pport" --log.level=warn >"$work/prometheus.log" 2>&1 &
ppid_=$!
# query EXPR PYCOND: wait (30 s at most) until Prometheus answers EXPR with a
# single value v for which PYCOND holds; the last answer in $work/q.json
query() {
    python3 - "$pport" "$1" "$2" "$work/q.json" <<'PY'
import json, sys, time, urllib.parse, urllib.request
port, expr, cond, out = sys.argv[1:]
url = "http://127.0.0.1:%s/api/v1/query?query=%s" % (port, urllib.parse.quote(expr))
for _ in range(60):
    try:
        d = json.load(urllib.request.urlopen(url, timeout=5))
        open(out, "w").write(json.dumps(d))
        r = d["data"]["result"]
        if d["status"] == "success" and len(r) == 1 and eval(cond, {"v": float(r[0]["value"][1])}):
            print("  %s = %s" % (expr, r[0]["value"][1]))
            sys.exit(0)
    except OSError:
        pass
    time.sleep(0.5)
print("  %s: %s" % (expr, open(out).read() if __import__("os").path.exists(out) else "no answer"))
sys.exit(1)
PY
}
check "Prometheus scrapes the server (up == 1: the text parsed)" query 'up{job="uraid"}' 'v == 1'
check "Prometheus has the member's write counter > 0" \
    query "uraid_member_writes_total{array=\"m\",member=\"$work/d1\"}" 'v > 0'
check "uraid fail d2" bash -c "'$URAID' fail '$work/d2' >/dev/null"
check "Prometheus then reads the degraded-slot gauge as 1" \
    query 'uraid_array_degraded_slots{array="m"}' 'v == 1'
check "and the failed member's faulty state as 1" \
    query "uraid_member_state{array=\"m\",member=\"$work/d2\",state=\"faulty\"}" 'v == 1'
check "the request histogram works in PromQL (write quantile > 0)" \
    query 'histogram_quantile(0.5, sum by (le) (uraid_request_duration_seconds_bucket{kind="write"}))' 'v > 0'
kill "$ppid_"; wait "$ppid_" 2>/dev/null; ppid_=

check "the server stops cleanly" stop_served m
exit $((fails > 0))
