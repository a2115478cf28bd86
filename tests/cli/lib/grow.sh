# shellcheck shell=bash
# Shared by the tests of `uraid grow` on served arrays (source it after
# common.sh, with $URAID and $work set; the served arrays' sockets are
# $work/NAME.sock, the data written first is $work/data):
#   uri NAME                  the array's NBD URI
#   data_ok NAME              the export's first bytes equal $work/data
#   examine MEMBER FIELD      one field of mdadm --examine
#   sums FILE...              their sha256 sums on one line
#   check_zero NAME           uraid check --wait finds mismatch_cnt 0
#   settled NAME [TRIES] [ALSO]  no background job (TRIES x 0.2 s, 300 unless told),
#                             and the status line ALSO (a grep pattern) if given
#   bitmap_field MEMBER KEY   a value of uraid examine --json's bitmap object
#   fio_bg NAME               fio random writes, verified (crc32c, seed
#                             $SEED), of $FIO_SIZE bytes from $FIO_OFFSET on
#                             $FIO_LOOPS times (1M, 2M, 4 unless set), in the
#                             background; its pid in $fpid
#   scribble SEED MEMBER...   different random bytes on each member from the
#                             end of the size used to the end of its data
#                             area (only a resync of a grown range makes the
#                             copies agree)
#   quiet NAME                wait until the array has nothing left to write
#                             on its own (see the function)
#   refused [-u] NAME WHAT ARGS...
#                             uraid grow NAME ARGS is refused: exit 1 (-u: 2,
#                             a usage error), one line, and every file in
#                             ${mem[@]} and ${others[@]} byte-identical;
#                             its message in $last_out

uri() { echo "nbd+unix:///?socket=$work/$1.sock"; }
data_ok() {
    nbdcopy "$(uri "$1")" - | head -c "$(stat -c %s "$work/data")" | cmp -s - "$work/data"
}
examine() { mdadm --examine "$1" 2>/dev/null | sed -n "s/^ *$2 : //p" | head -1; }
sums() { sha256sum "$@" | cut -c1-64 | tr '\n' ' '; }
check_zero() {
    local out
    out=$("$URAID" check --wait "$1" 2>&1)
    grep -q "mismatch_cnt 0" <<<"$out" || { echo "$out"; return 1; }
}
settled() {
    local st
    for _ in $(seq "${2:-300}"); do
        st=$("$URAID" status "$1")
        grep -q "Background : none" <<<"$st" && { [ -z "${3:-}" ] || grep -q "$3" <<<"$st"; } &&
            return 0
        sleep 0.2
    done
    "$URAID" status "$1"
    return 1
}
bitmap_field() {
    "$URAID" examine --json "$1" | python3 -c \
        'import json, sys; print(json.load(sys.stdin)[0]["bitmap"][sys.argv[1]])' "$2"
}
fio_bg() {
    (cd "$work" && exec fio --name=v --ioengine=nbd --uri="$(uri "$1")" --rw=randwrite \
        --bs=4k --offset="${FIO_OFFSET:-2M}" --size="${FIO_SIZE:-1M}" --iodepth=4 --verify=crc32c \
        --verify_fatal=1 --randseed="$SEED" --loops="${FIO_LOOPS:-4}" --output="$work/fio-$1.log" >/dev/null 2>&1) &
    fpid=$!
}

scribble() {
    local seed=$1 m off used avail; shift
    for m in "$@"; do
        read -r off used avail < <("$URAID" examine --json "$m" | python3 -c 'import json, sys
e = json.load(sys.stdin)[0]
print(e["data_offset_bytes"], e["used_dev_bytes"], e["avail_dev_bytes"])')
        randfile "$seed" $((avail - used)) "$work/scribble"
        dd if="$work/scribble" of="$m" bs=64K oflag=seek_bytes seek=$((off + used)) conv=notrunc \
            status=none
        seed=$((seed + 1))
    done
    rm -f "$work/scribble"
}

# A served array writes its members on its own for a while after the last
# request: the idle clean marking (200 ms after it), the bitmap daemon
# clearing bits (two sweeps, 5 s apart each), a background job's end. A
# sleep or "the sums stayed the same for 0.5 s" misses the later ones on a
# loaded machine (CI compared a member before and after a refusal and found
# the clean marking between). The server says when none is due: clean, no
# job, nothing in flight, no dirty cache bytes, no bitmap bit set (none is
# cleared while degraded: then they stay). It reports these under the locks
# their writers hold, so from then on only a request writes the members:
# what a refusal must not send. Up to 60 s.
quiet() {
    status_until "$1" 60 'd["clean"] and not d["background"] and d["in_flight"] == 0
and d["write_cache"]["dirty_bytes"] == 0
and (not d["bitmap"] or d["bitmap"]["dirty_bits"] == 0 or d["degraded"] > 0)'
}

refused() {
    local want=1 name what before after out rc
    [ "$1" = -u ] && { want=2; shift; }
    name=$1 what=$2; shift 2
    check "refused: $what: $name is quiet first" quiet "$name"
    before=$(sums "${mem[@]}" "${others[@]+"${others[@]}"}")
    out=$("$URAID" grow "$name" "$@" 2>&1); rc=$?
    after=$(sums "${mem[@]}" "${others[@]+"${others[@]}"}")
    check "refused: $what (rc $rc)" test $rc -eq $want || echo "$out"
    check "  in one line naming it: $out" one_line "$out"
    last_out=$out
    check "  members unchanged" test "$before" = "$after"
}
