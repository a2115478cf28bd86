#!/bin/bash
# Referee: mdadm --examine agrees field by field with uraid examine --json on
# members that uraid create made (every level, layout, metadata, bitmap).
set -u
BUILD=${BUILD:-build}
work=$(mktemp -d /tmp/uraid-mdadm-examine.XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 "$(dirname "$0")/compare_examine.py" "$BUILD/uraid" "$work/images"
