#!/bin/bash
# Do two oci2ovl builds write the same tree manifests? Each image is
# imported by both into fresh stores of their own; both must end alike
# (exit status), with the same trees/ files, byte for byte but for the
# header's ino= (the inode of the layer's root, the store's own).
#
#   tree-same.sh OLD_BIN NEW_BIN WORKDIR LAYOUT:TAG...
#   tree-same.sh OLD_BIN NEW_BIN WORKDIR --corpus CASES_JSON LAYOUT_ROOT
#
# --corpus takes every case of a cases.json (tools/oci2ovl/tests/
# run-corpus.sh's format) with its import arguments. Prints a line per
# image and the number of manifests compared; exits 1 on any difference.
set -uo pipefail
old=$1 new=$2 work=${3:?}
shift 3
refs=()
if [ "${1:-}" = --corpus ]; then
	mapfile -t refs < <(python3 - "$2" "$3" <<'EOF'
import json, sys
for c in json.load(open(sys.argv[1]))["cases"]:
    tag = c.get("tag") or c.get("layout") or c["name"]
    print(" ".join(["%s/%s:%s" % (sys.argv[2], tag, tag)] +
                   (c.get("args") or [])))
EOF
)
else
	refs=("$@")
fi

failed=0 trees=0 n=0
for ref in "${refs[@]}"; do
	n=$((n + 1))
	why=
	for side in old new; do
		rm -rf "${work:?}/$side"
		mkdir -p "$work/$side"
		bin=$old
		[ $side = new ] && bin=$new
		# shellcheck disable=SC2086
		timeout 300 "$bin" --store "$work/$side" import $ref --name t \
			--no-sync >/dev/null 2>"$work/$side.err"
		echo $? >"$work/$side.rc"
	done
	if ! cmp -s "$work/old.rc" "$work/new.rc"; then
		why="exit $(cat "$work/old.rc") and $(cat "$work/new.rc")"
	else
		a=$(ls "$work/old/trees" 2>/dev/null)
		b=$(ls "$work/new/trees" 2>/dev/null)
		[ "$a" = "$b" ] || why="trees/ holds \"$a\" and \"$b\""
		for t in $a; do
			[ -n "$why" ] && break
			trees=$((trees + 1))
			cmp -s <(sed '1s/ ino=[0-9]*$//' "$work/old/trees/$t") \
				<(sed '1s/ ino=[0-9]*$//' "$work/new/trees/$t") ||
				why="trees/$t differs: $(diff <(sed '1s/ ino=[0-9]*$//' "$work/old/trees/$t") <(sed '1s/ ino=[0-9]*$//' "$work/new/trees/$t") | head -c 300)"
		done
	fi
	if [ -n "$why" ]; then
		echo "FAIL $ref: $why"
		failed=$((failed + 1))
	else
		echo "ok $ref ($(cat "$work/new.rc"))"
	fi
done
echo "$((n - failed)) of $n images alike, $trees manifests compared"
[ $failed = 0 ]
