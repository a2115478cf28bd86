#!/bin/bash
# Referee, both ways (see uraid_md.py): arrays uraid creates and fills start in
# Linux md with the same size and data and md's check finds 0 mismatches; arrays
# md creates are examined by uraid with the fields mdadm reports. One boot.
. "$(dirname "$0")/lib.sh"
interop_prepare || exit $?
interop_tmpdir || exit 1
python3 "$INTEROP_DIR/uraid_md.py" "$BUILD" "$INTEROP_TMP/work" "${URAID_SEED:-20261129}"
