#!/bin/bash
# Run oci2ovl over a corpus of OCI layouts described by a cases.json and
# check every case's outcome. Used by tests/bats/host/20-oci2ovl-hostile.bats.
#
#   run-corpus.sh BIN CASES_JSON LAYOUT_ROOT WORKDIR
#
# Each case gets a fresh store WORKDIR/store-NAME. A case passes when:
#  - accept: exit 0; the flattened layers hold must_contain and not
#    must_not_contain (lfs_tree.py check-case); no overlay xattr but our
#    markers is in a layer;
#  - reject: exit 3; stderr names the layer or the document, the entry
#    (for entry rules) and the rule ("rule" in our own cases.json); no
#    layer dir and no tmp/ leftover in the store;
#  - fail: exit 1 with the rule in stderr, quickly;
#  - accept-or-reject (and a reject with a tolerated accept): either, each
#    checked as above;
#  - always: it finishes within 120 s, and the checksum of everything
#    outside the store (sentinel dir, the layouts, WORKDIR minus stores)
#    is unchanged.
# Prints one line per case; exits 1 if any case failed, 2 if it could not
# set up.
#
# The sentinel directory is a fixed path the images aim at
# (/tmp/oci-hostile-sentinel). With LFS_SENTINEL=DIR, a directory of the
# run's own, the cases run in a mount namespace of their own with DIR
# bound on that path: what a case writes there lands in DIR, where the
# checksum sees it, and runs in other checkouts never see it (nor disturb
# this one). The path itself is made on the host, as an empty mount point.
set -uo pipefail
bin=$1 cases=$2 root=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
tree="python3 $here/lfs_tree.py"
sent=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sentinel_dir"])' "$cases")
if [ -n "${LFS_SENTINEL:-}" ] && [ -z "${LFS_SENTINEL_BOUND:-}" ]; then
	mkdir -p "$sent" "$LFS_SENTINEL" || exit 2
	# shellcheck disable=SC2016
	exec "$here/unshare-m.sh" bash -c \
		'mount --bind "$1" "$2" || exit 2; shift 2; export LFS_SENTINEL_BOUND=1; exec "$0" "$@"' \
		"$0" "$LFS_SENTINEL" "$sent" "$@"
fi
mkdir -p "$work" "$sent"

outside_sum() { # STORE
	{
		find "$sent" "$root" "$work" -path "$1" -prune -o \
			-path "$work/logs" -prune -o \
			-printf '%p %y %m %U %G %s %T@ %C@\n' | sort
		find "$sent" -type f -exec sha256sum {} + | sort
		getfattr -R -h -d -m - "$sent" 2>/dev/null
	} | sha256sum
}

failed=0 n=0
mkdir -p "$work/logs" "$work/stores"
while IFS='|' read -r name tag expect rule args tolerated; do
	n=$((n + 1))
	store=$work/stores/$name log=$work/logs/$name
	rm -rf "$store"
	mkdir -p "$store"
	before=$(outside_sum "$store")
	# shellcheck disable=SC2086
	timeout 120 "$bin" --store "$store" import "$root/$tag:$tag" --name "$name" $args \
		>"$log.out" 2>"$log.err"
	rc=$?
	after=$(outside_sum "$store")
	why=
	[ "$before" = "$after" ] || why="something outside the store changed"
	[ $rc = 124 ] && why="did not finish in 120 s"
	outcome=other
	case $rc in 0) outcome=accept ;; 3) outcome=reject ;; 1) outcome=fail ;; esac
	ok_outcomes=$expect
	[ "$expect" = accept-or-reject ] && ok_outcomes="accept reject"
	[ -n "$tolerated" ] && ok_outcomes="$ok_outcomes $tolerated"
	case " $ok_outcomes " in *" $outcome "*) ;; *) why=${why:-"exit $rc ($outcome), want $ok_outcomes: $(head -c 300 "$log.err")"} ;; esac
	if [ -z "$why" ] && [ "$outcome" = accept ]; then
		mapfile -t layers < <("$bin" --store "$store" layers "$name")
		# the content and the overlay xattrs, in one python process
		msg=$($tree check-accepted "$cases" "$name" "${layers[@]}" 2>&1) ||
			why=${msg:-"check-accepted failed"}
	fi
	if [ -z "$why" ] && [ "$outcome" != accept ]; then
		grep -q "^oci2ovl: " "$log.err" || why="no oci2ovl: message"
		if [ -n "$rule" ] && ! grep -qF -- "$rule" "$log.err"; then
			why="stderr lacks \"$rule\": $(head -c 300 "$log.err")"
		fi
		# an entry rule names the layer and the entry
		if grep -q 'entry "' "$log.err" &&
			! grep -q '^oci2ovl: \(warning: \)\?layer sha256:[0-9a-f]\{64\}: entry "' "$log.err"; then
			why="refusal does not name layer and entry"
		fi
		# nothing of a refused image is visible: no record, no temporary
		# directory (layers before the refused one may stay: each layer
		# is verified on its own)
		[ -e "$store/images/$name.json" ] && why="record written"
		[ -n "$(ls -A "$store/tmp" 2>/dev/null)" ] && why="tmp/ not empty"
	fi
	if [ -n "$why" ]; then
		echo "FAIL $name: $why"
		failed=$((failed + 1))
	else
		echo "ok $name ($outcome)"
	fi
done < <(python3 - "$cases" <<'EOF'
import json, sys
for c in json.load(open(sys.argv[1]))["cases"]:
    tol = " ".join(t["outcome"] for t in c.get("tolerated") or [])
    print("|".join([c["name"], c.get("tag") or c.get("layout") or c["name"],
                     c["expect"], c.get("rule") or "",
                     " ".join(c.get("args") or []), tol]))
EOF
)
echo "$((n - failed)) of $n cases handled as expected"
[ $failed = 0 ]
