#!/bin/bash
# The bash completion (contrib/bash-completion/uraid), sourced into this
# bash and called as bash calls it (COMP_WORDS, COMP_CWORD): commands from
# `uraid --help`, a command's options and their listed values from
# `uraid COMMAND --help` (read at each completion: a stub uraid whose help
# gains an option completes it at once), files for DEVICE/MEMBER arguments and
# file-valued options, and the served arrays where an ARRAY is taken.
set -u
BUILD=${BUILD:-build}
URAID=$(realpath "$BUILD/uraid")
. "$(dirname "$0")/lib/common.sh"
script=$(realpath "$(dirname "$0")/../../contrib/bash-completion/uraid")
[ -r "$script" ] || { echo "FAIL: no $script"; exit 1; }
((BASH_VERSINFO[0] > 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] >= 3))) ||
    { echo "skip: needs bash 4.3 or later"; exit 77; }
work_dir completion
echo "work in $work"

# shellcheck source=/dev/null
. "$script"
complete -p uraid >/dev/null 2>&1 || { echo "FAIL: the script registers no completion for uraid"; exit 1; }
PATH=$(dirname "$URAID"):$PATH        # "uraid" as typed is this build's

# comp WANT WORD...: complete the last WORD of the command line WORD... (split
# as bash splits it: "=" and ":" are words of their own) and compare the
# sorted COMPREPLY, space-separated, with WANT
comp() {
    local want=$1; shift
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _uraid
    local got
    got=$(printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort | tr '\n' ' ')
    got=${got% }
    if [ "$got" = "$want" ]; then
        echo "ok: ${COMP_LINE}<TAB> -> $got"
    else
        echo "FAIL: ${COMP_LINE}<TAB> -> '$got', want '$want'"; fails=$((fails + 1))
    fi
}

# commands and top-level options
comp "create" uraid cre
comp "status stop" uraid st
comp "--version" uraid --ver
comp "create" "$URAID" cre                       # called by its path
verbs=$("$URAID" --help | sed -n 's/^  \([a-z][a-z0-9-]*\)  .*/\1/p' | sort | tr '\n' ' ')
comp "${verbs% }" uraid ""
comp "zero-superblock" uraid zero                # the longest name, and the newest verbs
comp "monitor" uraid mon
comp "add create list repair status" uraid pool ""      # sub-commands from the usage lines
comp "create delete grow" uraid volume ""
comp "--resiliency=" uraid volume create --resi
comp "--groups=" uraid volume create --gro

# a command's options; those taking a value end in "="
comp "--level=" uraid create --lev
comp "--raid-devices=" uraid create --raid
comp "--read-ahead= --read-only" uraid serve --read-
comp "--ioengine=" uraid bench --ioe
comp "--filename=" uraid bench --filen
comp "--characterise" uraid bench --charac
comp "--json" uraid status --j
# values the help lists, with and without the "="
comp "internal none" uraid create --bitmap =
comp "internal" uraid create --bitmap = in
comp "bitmap ppl resync" uraid grow --consistency-policy =
comp "require" uraid serve --tls = re
comp "off on require" uraid serve --tls ""
comp "" uraid serve --read-ahead =            # SIZE: a placeholder, nothing to offer
comp "" uraid create --level =               # L: nothing to offer

# files: members, file-valued options, the items of fio's --filename list
truncate -s 16M "$work/m0.img" "$work/m1.img" "$work/spare.img"
mkdir "$work/dir"
comp "$work/m0.img $work/m1.img" uraid serve "$work/m"
comp "$work/m0.img $work/m1.img" uraid create -l 1 -n 2 "$work/m"   # -l's value skipped
comp "$work/spare.img" uraid serve --socket = "$work/s"
comp "$work/spare.img" uraid serve --socket "$work/s"
comp "$work/dir" uraid serve --tls-certificates = "$work/"
comp "$work/m1.img" uraid bench --filename = "$work/m0.img" : "$work/m1"
comp "$work/m0.img $work/m1.img" uraid examine --json "$work/m"
# bench's listed values
comp "libaio" uraid bench --ioengine = li
comp "json" uraid bench --output-format = j
comp "randread randrw randwrite" uraid bench --rw = ran
# an option whose value is optional (--buffered[=0|1]) takes no separate value word
comp "--buffer_pattern= --buffered" uraid bench --buffe
comp "$work/m0.img $work/m1.img" uraid bench --buffered "$work/m"
comp "$work/m0.img $work/m1.img" uraid bench --randrepeat "$work/m"

# served arrays where an ARRAY is taken, files after it
"$URAID" create --level=1 --raid-devices=2 --name=compl --run "$work/m0.img" "$work/m1.img" \
    >/dev/null || { echo "FAIL: create"; exit 1; }
serve_bg "$work" compl "$work/m0.img" "$work/m1.img" || { echo "FAIL: serve"; exit 1; }
comp "compl" uraid status ""
comp "compl" uraid stop co
comp "compl" uraid add ""
comp "$work/spare.img" uraid add compl "$work/sp"
comp "compl" uraid check --wait ""
comp "$work/m0.img $work/m1.img" uraid fail "$work/m"       # MEMBER: files
check "the server stops" stop_served compl

# options come from the help at each completion: a stub uraid whose help grows
mkdir "$work/stub"
cat >"$work/stub/uraid" <<'EOF'
#!/bin/bash
if [ "${1-}" = --help ]; then
    printf 'Usage: uraid COMMAND\n\nCommands:\n  serve     serve\n  monitor   watch\n\nOptions: --help, --version\n'
elif [ "${2-}" = --help ]; then
    printf 'Usage: uraid %s [OPTIONS] ARRAY MEMBER...\n\n' "$1"
    printf '      --metrics=HOST:PORT  serve /metrics\n'
    printf '  -m, --member-timeout=SECONDS\n                          how long\n'
    [ -e "$(dirname "$0")/grown" ] && printf '      --metrics-path=PATH  where\n'
    printf '  -h, --help              this text\n'
elif [ "${1-}" = status ]; then
    # a uraid that hangs: the completion gives up on it (timeout 2) and offers
    # no array; sleep's output is not the pipe, so the pipe closes when it does
    sleep 6 >/dev/null 2>&1
    printf '  "export_name": "zzlate"\n'
fi
exit 0
EOF
chmod +x "$work/stub/uraid"
comp "monitor" "$work/stub/uraid" mon
comp "--member-timeout= --metrics=" "$work/stub/uraid" serve --me
touch "$work/stub/grown"
comp "--member-timeout= --metrics-path= --metrics=" "$work/stub/uraid" serve --me
comp "$work/spare.img" "$work/stub/uraid" serve --metrics-path = "$work/sp"
comp "" "$work/stub/uraid" stop zz                 # status --json hangs: given up

if [ "$fails" -eq 0 ]; then echo "all passed"; else echo "$fails failed"; exit 1; fi
