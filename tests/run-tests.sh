#!/bin/bash
# Runs test programs and scripts; each exits 0 (pass), 77 (skip) or anything
# else (fail). Output of each test goes to $BUILD/test-logs/<name>.log and is
# shown for failures. Ends with one summary line: "N passed, N failed, N skipped".
BUILD=${BUILD:-build}
logdir=$BUILD/test-logs
mkdir -p "$logdir"
pass=0 fail=0 skip=0 failed=()
for t in "$@"; do
    name=$(basename "$t")
    log=$logdir/$name.log
    start=$(date +%s)
    if [[ $t == *.sh ]]; then BUILD=$BUILD bash "$t" >"$log" 2>&1; else "$t" >"$log" 2>&1; fi
    rc=$?
    secs=$(( $(date +%s) - start ))
    if [ $rc -eq 0 ]; then
        pass=$((pass + 1)); printf 'PASS %-40s %4ss\n' "$name" "$secs"
    elif [ $rc -eq 77 ]; then
        skip=$((skip + 1)); printf 'SKIP %-40s %s\n' "$name" "$(tail -n1 "$log")"
    else
        fail=$((fail + 1)); failed+=("$name")
        printf 'FAIL %-40s %4ss (exit %d), last lines of %s:\n' "$name" "$secs" "$rc" "$log"
        tail -n 25 "$log" | sed 's/^/    /'
    fi
done
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
