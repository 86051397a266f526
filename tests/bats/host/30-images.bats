#!/usr/bin/env bats
# The image recipes (images/): the busybox image builds, holds what each of
# its layers promises, runs, is reproducible and is cached; the deep recipe
# makes as many layers as asked. Builds go to a temporary directory, except
# the last test, which builds the busybox image the guest suites use.

setup_file() {
	REPO=$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)
	export REPO OUT=$BATS_FILE_TMPDIR/busybox
	"$REPO/images/busybox/build.sh" --out "$OUT" 2>"$BATS_FILE_TMPDIR/build.log"
	umoci unpack --image "$OUT:latest" "$BATS_FILE_TMPDIR/bundle" >/dev/null 2>&1
	export ROOT=$BATS_FILE_TMPDIR/bundle/rootfs
}

# lfs_blob DIGEST: the path of a blob of the busybox layout
lfs_blob() {
	echo "$OUT/blobs/sha256/${1#sha256:}"
}

lfs_manifest() {
	lfs_blob "$(jq -r '.manifests[0].digest' "$OUT/index.json")"
}

@test "the busybox recipe builds an OCI layout of three layers that skopeo reads" {
	run skopeo inspect "oci:$OUT:latest"
	[ "$status" = 0 ]
	[ "$(jq '.Layers | length' <<<"$output")" = 3 ]
	[ "$(jq -r '"\(.Os)/\(.Architecture)"' <<<"$output")" = linux/amd64 ]
}

@test "the busybox config sets entrypoint, env, working directory and dates" {
	run skopeo inspect --config "oci:$OUT:latest"
	[ "$status" = 0 ]
	diff -u - <(jq -c '.created, .config.Entrypoint, .config.Env, .config.WorkingDir,
		[.history[].created], [.history[] | .empty_layer // false]' <<<"$output") <<'EOF'
"2024-01-05T00:00:00Z"
["/usr/local/bin/hello"]
["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","GREETING=greetings from the image config"]
"/home/demo"
["2024-01-02T00:00:00Z","2024-01-03T00:00:00Z","2024-01-04T00:00:00Z","2024-01-05T00:00:00Z"]
[false,false,false,true]
EOF
}

@test "the busybox layers carry the whiteouts and the opaque marker" {
	local l n=0 names
	for l in $(jq -r '.layers[].digest' "$(lfs_manifest)"); do
		n=$((n + 1))
		# (a failing tar fails the test; grep finds none in layer 1)
		names=$(tar -tzf "$(lfs_blob "$l")")
		grep '\.wh\.' <<<"$names" | sed "s/^/$n /"
	done >"$BATS_TEST_TMPDIR/wh"
	diff -u - "$BATS_TEST_TMPDIR/wh" <<'EOF'
2 etc/.wh.motd
2 usr/share/.wh.doc
3 opt/.wh.node
3 srv/data/.wh..wh..opq
EOF
}

@test "the unpacked busybox rootfs has every layer's changes and no more" {
	# the applets are checked on their own below
	(set -o pipefail; cd "$ROOT" && find . -mindepth 1 \
		\( -path ./bin -o -path ./sbin -o -path ./usr/bin -o -path ./usr/sbin \) -prune -o \
		\( -type f -printf '%P %y %M %U:%G %n %s\n' \) -o -printf '%P %y %M %U:%G\n' |
		sort) >"$BATS_TEST_TMPDIR/tree"
	diff -u - "$BATS_TEST_TMPDIR/tree" <<'EOF'
dev d drwxr-xr-x 0:0
etc d drwxr-xr-x 0:0
etc/group f -rw-r--r-- 0:0 1 67
etc/os-release f -rw-r--r-- 0:0 1 140
etc/passwd f -rw-r--r-- 0:0 1 128
home d drwxr-xr-x 0:0
home/demo d drwxr-xr-x 1000:1000
home/demo/notes f -rw-r--r-- 1000:1000 1 23
opt d drwxr-xr-x 0:0
opt/node d drwxr-xr-x 0:0
opt/node/inside f -rw-r--r-- 0:0 1 42
opt/tree f -rw-r--r-- 0:0 1 21
proc d drwxr-xr-x 0:0
root d drwx------ 0:0
run d drwxr-xr-x 0:0
srv d drwxr-xr-x 0:0
srv/data d drwxr-xr-x 0:0
srv/data/new f -rw-r--r-- 0:0 1 27
sys d drwxr-xr-x 0:0
tmp d drwxrwxrwt 0:0
usr d drwxr-xr-x 0:0
usr/local d drwxr-xr-x 0:0
usr/local/bin d drwxr-xr-x 0:0
usr/local/bin/hello f -rwxr-xr-x 0:0 1 465
usr/local/bin/hl3 f -rw-r--r-- 0:0 3 22
usr/local/bin/sgid f -rwxr-sr-x 0:8 1 0
usr/local/bin/suid f -rwsr-xr-x 0:0 1 28
usr/local/share d drwxr-xr-x 0:0
usr/local/share/lfs d drwxr-xr-x 1000:100
usr/local/share/lfs/fifo p prw--w---- 0:0
usr/local/share/lfs/hl1 f -rw-r--r-- 0:0 3 22
usr/local/share/lfs/hl2 f -rw-r--r-- 0:0 3 22
usr/local/share/lfs/xattr f -rw-r--r-- 0:0 1 38
usr/share d drwxr-xr-x 0:0
usr/share/doc d drwxr-xr-x 0:0
usr/share/doc/README f -rw-r--r-- 0:0 1 52
var d drwxr-xr-x 0:0
var/tmp d drwxrwxrwt 0:0
EOF
}

@test "the busybox hard links share one inode and the applets point at busybox" {
	local n
	[ "$(stat -c %i "$ROOT/usr/local/share/lfs/hl1")" = "$(stat -c %i "$ROOT/usr/local/bin/hl3")" ]
	[ "$(stat -c %i "$ROOT/usr/local/share/lfs/hl2")" = "$(stat -c %i "$ROOT/usr/local/bin/hl3")" ]
	# bin/ and sbin/ applets are hard links of bin/busybox, usr/ ones symlinks
	n=$(find "$ROOT/bin" "$ROOT/sbin" -type f | wc -l)
	[ "$(stat -c %h "$ROOT/bin/busybox")" = "$n" ]
	[ "$n" -gt 100 ]
	local odd
	odd=$(find "$ROOT/bin" "$ROOT/sbin" ! -type f ! -type d)
	[ -z "$odd" ]
	[ "$(readlink "$ROOT/usr/bin/env")" = /bin/busybox ]
	odd=$(find "$ROOT/usr/bin" "$ROOT/usr/sbin" -mindepth 1 ! -lname /bin/busybox)
	[ -z "$odd" ]
}

@test "the busybox xattrs are those of their last layer" {
	(set -o pipefail; cd "$ROOT" && find . -type f | sort | xargs getfattr -h -d -m - --absolute-names) \
		>"$BATS_TEST_TMPDIR/xattrs"
	diff -u - "$BATS_TEST_TMPDIR/xattrs" <<'EOF'
# file: ./srv/data/new
user.layer="3"

# file: ./usr/local/bin/hl3
user.layer="2"

# file: ./usr/local/share/lfs/hl1
user.layer="2"

# file: ./usr/local/share/lfs/hl2
user.layer="2"

# file: ./usr/local/share/lfs/xattr
user.color="red"
user.layer="1"

EOF
}

@test "the busybox entrypoint runs in a chroot of the unpacked rootfs" {
	run env -i PATH=/usr/bin:/bin GREETING=hi "$(command -v chroot)" "$ROOT" /bin/sh -c 'cd /home/demo && /usr/local/bin/hello'
	[ "$status" = 0 ]
	diff -u - <(printf '%s\n' "${lines[@]:0:4}" | sed 's/pid [0-9]*/pid N/') <<'EOF'
Hello from the layerfs demo image: layerfs busybox demo 3
  pid N as root in /home/demo, hi
  /opt/tree is a regular file, /opt/node is a directory
  1 file(s) in /srv/data; /etc/motd is gone
EOF
}

@test "a second busybox build with the same inputs does nothing" {
	local before
	before=$(stat -c %i:%Y "$OUT" "$OUT/index.json")
	run "$REPO/images/busybox/build.sh" --out "$OUT"
	[ "$status" = 0 ]
	[ "$output" = "images: busybox: up to date: $OUT" ]
	[ "$(stat -c %i:%Y "$OUT" "$OUT/index.json")" = "$before" ]
}

@test "a busybox build with other inputs replaces the layout; equal inputs give equal digests" {
	local first
	first=$(jq -r '.manifests[0].digest' "$OUT/index.json")
	SOURCE_DATE_EPOCH=1735689600 run "$REPO/images/busybox/build.sh" --out "$BATS_TEST_TMPDIR/b"
	[ "$status" = 0 ]
	[ "$(jq -r '.manifests[0].digest' "$BATS_TEST_TMPDIR/b/index.json")" != "$first" ]
	# the same inputs as setup_file, forced: the very same image
	run "$REPO/images/busybox/build.sh" --out "$BATS_TEST_TMPDIR/b" --force
	[ "$status" = 0 ]
	[ "$(jq -r '.manifests[0].digest' "$BATS_TEST_TMPDIR/b/index.json")" = "$first" ]
	# nothing is left beside the layout but its lock
	[ "$(ls -A "$BATS_TEST_TMPDIR")" = "$(printf 'b\nb.lock')" ]
}

@test "the deep recipe stacks as many layers as asked, with whiteouts and opaque dirs" {
	local d=$BATS_TEST_TMPDIR/deep
	DEEP_LAYERS=60 run "$REPO/images/deep/build.sh" --out "$d"
	[ "$status" = 0 ]
	[ "$(skopeo inspect "oci:$d:latest" | jq '.Layers | length')" = 60 ]
	umoci unpack --image "$d:latest" "$d.bundle" >/dev/null 2>&1
	run chroot "$d.bundle/rootfs" /bin/sh -c "$(skopeo inspect --config "oci:$d:latest" | jq -r '.config.Entrypoint[2]')"
	[ "$output" = "deep: 60 layers merged, /top is 60" ]
	# t/d1/o was made opaque by layer 50: layer 10's files there are gone
	[ "$(ls "$d.bundle/rootfs/t/d1/o")" = "$(printf 'from50\nx50')" ]
	# whiteouts of files: layer 3 hid f2 of layer 2
	[ ! -e "$d.bundle/rootfs/t/d1/d2/d3/d4/d5/f2" ]
	# layer 50 hid the directory d10, later layers made it again
	[ ! -e "$d.bundle/rootfs/t/d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/f47" ]
	[ -e "$d.bundle/rootfs/t/d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/f57" ]
}

@test "the busybox image the guest suites use is built and linked from build/images" {
	run "$REPO/images/busybox/build.sh"
	[ "$status" = 0 ]
	[ -f "$REPO/build/images/busybox/index.json" ]
	[ "$(readlink "$REPO/build/images/busybox")" = "${IMAGES_OUT:-${LFS_CACHE:-$HOME/.cache/layerfs}/images}/busybox" ]
}
