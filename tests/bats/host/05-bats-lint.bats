#!/usr/bin/env bats
# tools/bats-lint, the checker of the checks: every suite and helper
# library passes it, and each kind of check that cannot fail, planted in a
# fixture (fixtures/bats-lint/KIND.bats, its findings listed as "LINE KIND"
# in KIND.expect), is found, with its kind, at its line, and nothing else.

setup() {
	REPO=$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)
	LINT=$REPO/tools/bats-lint
	FIX=$BATS_TEST_DIRNAME/fixtures/bats-lint
}

# lint_found FILE: bats-lint on FILE, its findings as sorted "LINE KIND"
# lines in $found; its status in $status, its output in $output
lint_found() {
	run "$LINT" "$1"
	echo "$output"
	found=$(sed -E 's/^[^:]*:([0-9]+): ([a-z-]+): .*/\1 \2/' <<<"$output" | sort)
}

# lint_kind KIND: the fixture of KIND gives exactly its expected findings
lint_kind() {
	local want
	[ -f "$FIX/$1.bats" ] || { echo "no fixture for $1"; return 1; }
	want=$(sort "$FIX/$1.expect") || return 1
	grep -q " $1\$" <<<"$want" || { echo "$1.expect names no $1 finding"; return 1; }
	lint_found "$FIX/$1.bats"
	[ "$status" = 1 ] || return 1
	[ "$found" = "$want" ] || { diff -u <(echo "$want") <(echo "$found"); return 1; }
}

@test "every suite and helper library of the repo passes bats-lint" {
	run "$LINT"
	echo "$output"
	[ "$status" = 0 ]
	[ -z "$output" ]
	# and it did read them: every suite and library, no fixture
	run "$LINT" -l
	[ "$status" = 0 ]
	local f
	for f in "$REPO"/tests/bats/*.bats "$REPO"/tests/bats/host/*.bats "$REPO"/tests/bats/lib*.bash; do
		grep -qxF "$f" <<<"$output" || { echo "not read: $f"; return 1; }
	done
	[[ $output != */fixtures/* ]]
}

@test "the clean fixture and its library pass" {
	run "$LINT" "$FIX/clean.bats" "$FIX/lib-fixture.bash"
	echo "$output"
	[ "$status" = 0 ]
	[ -z "$output" ]
}

@test "a mid-test negation is found (bang)" {
	lint_kind bang
}

@test "a mid-test && list is found, a conditional action is not (and-list)" {
	lint_kind and-list
}

@test "a run without a status check before only negative output checks is found (run-status)" {
	lint_kind run-status
}

@test "an emptiness check of a command that may fail is found (empty-subst)" {
	lint_kind empty-subst
}

@test "local, export, declare and readonly of a command substitution are found (local-mask)" {
	lint_kind local-mask
}

@test "a pipeline whose failing first stages nobody sees is found (pipeline)" {
	lint_kind pipeline
}

@test "helpers run with errexit off, teardown included, are found (errexit-off)" {
	lint_kind errexit-off
}

@test "a status read after a command errexit stops at is found (dead-status)" {
	lint_kind dead-status
}

@test "run flags without bats_require_minimum_version are found (run-flags)" {
	lint_kind run-flags
}

@test "opt-out markers need a known kind and a reason (lint-marker)" {
	lint_kind lint-marker
}

@test "what the checker cannot read is a finding (parse)" {
	lint_kind parse
}

@test "a defect planted in a copy of a real suite fails it; its marker with a reason lets it pass" {
	local s=$BATS_TEST_TMPDIR/suite
	mkdir "$s"
	cp "$REPO/tests/bats/10-mount.bats" "$REPO/tests/bats/lib.bash" "$s/"
	printf '%s\n' '' '@test "planted" {' '	! grep -q x /proc/mounts' '	true' '}' >>"$s/10-mount.bats"
	local line
	line=$(grep -n '! grep -q x /proc/mounts' "$s/10-mount.bats" | cut -d: -f1)
	lint_found "$s/10-mount.bats"
	[ "$status" = 1 ]
	[ "$found" = "$line bang" ]
	sed -i "${line}s/\$/ # bats-lint: allow bang -- planted/" "$s/10-mount.bats"
	run "$LINT" "$s"
	echo "$output"
	[ "$status" = 0 ]
	[ -z "$output" ]
}

@test "a missing file is a usage error" {
	run "$LINT" "$BATS_TEST_TMPDIR/nonexistent.bats"
	[ "$status" = 2 ]
	[[ $output == *"nonexistent.bats: no such file or directory"* ]]
}
