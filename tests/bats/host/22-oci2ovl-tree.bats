#!/usr/bin/env bats
# oci2ovl on the host: directories and symlinks across layers
# (docs/oci2ovl.md, "Directories and symlinks"). The crafted cases of
# tools/oci2ovl/tests/corpus_tree.py, checked by run-corpus.sh (with the
# checksum of everything outside the store), and what a corpus case
# cannot say: the umask, store keys, the wording of a refusal, the cost
# of deep paths. Host tests run as root.

setup_file() {
	REPO=$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)
	export REPO
	OWN=$BATS_FILE_TMPDIR/own
	export OWN
	python3 "$REPO/tools/oci2ovl/tests/lfs_tree.py" gen-corpus "$OWN"
	# the cases of corpus_tree.py, and the older ones it changed
	python3 - "$OWN/cases.json" "$OWN/tree.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["cases"] = [x for x in c["cases"]
              if x["name"].startswith("tree-") or "symlink" in x["name"]]
json.dump(c, open(sys.argv[2], "w"))
PY
}

setup() {
	B=$REPO/build/bin/oci2ovl-asan
	S=$BATS_TEST_TMPDIR/store
	export OCI2OVL_STORE=$S
}

lfs_tree_corpus() { # BIN
	run env LFS_SENTINEL="$BATS_TEST_TMPDIR/sentinel" \
		"$REPO/tools/oci2ovl/tests/run-corpus.sh" "$1" "$OWN/tree.json" \
		"$OWN" "$BATS_TEST_TMPDIR/work"
	echo "$output"
	[ "$status" = 0 ]
	[[ ${lines[-1]} =~ ^([0-9]+)\ of\ ([0-9]+)\ cases ]]
	[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]
	[ "${BASH_REMATCH[2]}" -ge 30 ]
}

# lfs_mkimages DIR: layouts a and b, the same two top layers on two bases
lfs_mkimages() {
	python3 - "$REPO/tools/oci2ovl/tests" "$1" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from lfs_tree import image, layout, tar, tarfile, ti, write_index
D = tarfile.DIRTYPE
base = {"a": tar([ti("home/", D, mode=0o755),
                  ti("home/app/", D, mode=0o700, uid=1000, gid=1000)]),
        "b": tar([ti("home/", D, mode=0o755),
                  ti("home/app/", D, mode=0o750, uid=2000, gid=2000)])}
# home/app is an implicit parent: it looks below
upper = tar([ti("home/app/.profile", data=b"p")])
# every parent named: it does not
top = tar([ti("etc/", D, mode=0o755), ti("etc/motd", data=b"m")])
for name, b in base.items():
    d = layout(sys.argv[2], name, None)
    write_index(d, name, [image(d, [b, upper, top])])
PY
}

# lfs_digests LAYOUT: the layer digests of its first image, bottom first
lfs_digests() {
	python3 - "$1" <<'PY'
import json, sys
idx = json.load(open(sys.argv[1] + "/index.json"))
m = json.load(open(sys.argv[1] + "/blobs/sha256/" +
                   idx["manifests"][0]["digest"][7:]))
print(" ".join(l["digest"] for l in m["layers"]))
PY
}

@test "every directory and symlink case of the crafted corpus ends as expected" {
	lfs_tree_corpus "$REPO/build/bin/oci2ovl"
}

@test "the ASan/UBSan build handles the directory and symlink cases cleanly" {
	lfs_tree_corpus "$REPO/build/bin/oci2ovl-asan"
	run grep -l 'runtime error\|AddressSanitizer' "$BATS_TEST_TMPDIR"/work/logs/*.err
	echo "$output"
	[ "$status" = 1 ]
}

@test "implicit directories and the layer root take neither the umask nor the clock" {
	local t=tree-implicit-parent-default dir
	umask 077
	"$B" import "$OWN/$t:$t" --name d
	umask 022
	dir=$("$B" layers d)
	run stat -c '%a %u:%g %Y' "$dir" "$dir/x" "$dir/x/y"
	[ "$status" = 0 ]
	[ "$output" = "755 0:0 0
755 0:0 0
755 0:0 0" ]
}

@test "a layer that looked below is stored once per base, others once" {
	local a b n out
	lfs_mkimages "$BATS_TEST_TMPDIR/img"
	"$B" import "$BATS_TEST_TMPDIR/img/a:a"
	"$B" import "$BATS_TEST_TMPDIR/img/b:b"
	out=$("$B" layers a)
	mapfile -t a <<<"$out"
	out=$("$B" layers b)
	mapfile -t b <<<"$out"
	[ "${#a[@]}" = 3 ]
	# top first: the top layer is shared, the upper one is not
	[ "${a[0]}" = "${b[0]}" ]
	[ "${a[1]}" != "${b[1]}" ]
	run stat -c '%a %u:%g' "${a[1]}/home/app" "${b[1]}/home/app"
	[ "$status" = 0 ]
	[ "$output" = "700 1000:1000
750 2000:2000" ]
	# the records name them: diff_id for the top, a chain key for the upper
	python3 - "$S/images/a.json" "$S/images/b.json" <<'PY'
import json, sys
for f in sys.argv[1:]:
    l = json.load(open(f))["layers"]
    assert l[0]["store_key"] == l[0]["diff_id"], l[0]
    assert l[1]["store_key"] != l[1]["diff_id"], l[1]
    assert l[2]["store_key"] == l[2]["diff_id"], l[2]
PY
	out=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["layers"][1]["store_key"][7:])' "$S/images/a.json")
	[ "${a[1]##*/}" = "$out" ]
	# a second import extracts nothing
	n=$(ls "$S/layers" | wc -l)
	[ "$n" = 5 ]
	run "$B" import "$BATS_TEST_TMPDIR/img/a:a" --name a2
	[ "$status" = 0 ]
	[ "$(ls "$S/layers" | wc -l)" = "$n" ]
	run diff <("$B" layers a) <("$B" layers a2)
	[ "$status" = 0 ]
}

@test "a symlink loop is refused naming the layer, the entry, the symlink and its layer" {
	local t=tree-symlink-loop-across-layers d left
	d=$(lfs_digests "$OWN/$t")
	read -ra d <<<"$d"
	run "$B" import "$OWN/$t:$t"
	echo "$output"
	[ "$status" = 3 ]
	[[ $output =~ ^oci2ovl:\ layer\ ${d[1]}:\ entry\ \"a/x\":\ more\ than\ 40\ symlinks\ on\ the\ way,\ the\ last\ \"[ab]\"\ \(layer\ ${d[0]}\)$ ]]
	# the lower layer stays, nothing of the refused one
	left=$(ls -A "$S/layers")
	[ "$(wc -w <<<"$left")" = 1 ]
	left=$(ls -A "$S/tmp")
	[ -z "$left" ]
	[ ! -e "$S/images/$t.json" ]
}

@test "an entry through a lower symlink lands where the merged view has it" {
	local t=tree-lower-symlink-entry l out
	"$B" import "$OWN/$t:$t" --name u
	out=$("$B" layers u)
	mapfile -t l <<<"$out"
	[ -f "${l[0]}/usr/lib/libfoo.so" ]
	[ ! -e "${l[0]}/lib" ]
	[ "$(readlink "${l[1]}/lib")" = usr/lib ]
}

@test "deep implicit parents over a deep lower tree cost time linear in the depth" {
	# 1500 nested directories below, 6000 files at the bottom above:
	# the converter that hashed every prefix of every entry took minutes
	python3 - "$REPO/tools/oci2ovl/tests" "$BATS_TEST_TMPDIR/img" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from lfs_tree import image, layout, tar, tarfile, ti, write_index
p, dirs = "", []
for i in range(1500):
    p += "d/"
    dirs.append(ti(p, tarfile.DIRTYPE, mode=0o750, uid=3))
files = [ti(p + "f%d" % i, data=b"") for i in range(6000)]
d = layout(sys.argv[2], "deep", None)
write_index(d, "deep", [image(d, [tar(dirs), tar(files)])])
PY
	run timeout 60 "$B" import "$BATS_TEST_TMPDIR/img/deep:deep" --no-sync
	[ "$status" = 0 ]
	local out
	out=$("$B" layers deep)
	run stat -c '%a %u' "${out%%$'\n'*}/d/d/d"
	[ "$output" = "750 3" ]
}
