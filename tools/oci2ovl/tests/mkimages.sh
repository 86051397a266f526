#!/bin/bash
# Build the differential-test images with umoci, offline, as root:
#
#   mkimages.sh DIR      -> OCI layout DIR/layout with tags:
#     churn   4 layers: deletes files, replaces a directory by a file and
#             back, a file by a directory, deletes and re-creates
#             directories, hard links (made and broken), xattrs (user.*,
#             trusted.*), device nodes, a fifo, set-uid/set-gid/sticky
#             modes, owners, symlinks (relative, absolute, dangling)
#     small   1 layer
#     deep    6 layers, each rewriting parts of one tree
#
# Each layer is made by 'umoci unpack' + editing the rootfs + 'umoci
# repack', so the layers are what umoci's own diff generator writes.
set -euo pipefail
out=$1
L=$out/layout
B=$out/bundle
mkdir -p "$out"
rm -rf "$L" "$B"
umoci init --layout "$L"

layer() { # TAG FUNCTION [ARG...]: unpack TAG, run FUNCTION in its rootfs, repack
	local tag=$1 fn=$2
	shift 2
	rm -rf "$B"
	umoci unpack --image "$L:$tag" "$B" >/dev/null
	(cd "$B/rootfs" && "$fn" "$@")
	umoci repack --image "$L:$tag" "$B" >/dev/null
}

churn1() {
	mkdir -p etc usr/bin d1/sub gone/deeper recreate var/tmp home/user
	echo "root:x:0:0::/root:/bin/sh" >etc/passwd
	echo hosts >etc/hosts
	printf 'binary\0data' >usr/bin/tool
	chmod 4755 usr/bin/tool
	printf 'sgid' >usr/bin/sg
	chmod 2711 usr/bin/sg
	chmod 1777 var/tmp
	echo same >usr/bin/a
	ln usr/bin/a usr/bin/b
	ln usr/bin/a etc/c
	echo child >d1/sub/x
	echo f1 >f1
	echo g >gone/deeper/g
	echo r1 >recreate/r1
	echo r2 >recreate/r2
	ln -s ../usr/bin/tool etc/rel
	ln -s /usr/bin/tool etc/abs
	ln -s /nowhere etc/dangling
	mknod dev-null c 1 3
	mknod dev-sda b 8 0
	chmod 0660 dev-sda
	mkfifo pipe
	echo owned >home/user/file
	chown -R 1000:1000 home/user
	chmod 0700 home/user
	setfattr -n user.comment -v hello etc/hosts
	setfattr -n trusted.note -v t1 usr/bin/a
	setfattr -n user.dir -v d etc
}

churn2() {
	rm etc/hosts                      # delete a file
	rm -rf d1 && echo now-a-file >d1  # directory -> file
	rm f1 && mkdir -p f1/inner && echo in >f1/inner/x # file -> directory
	rm -rf gone                       # delete a tree
	rm -rf recreate && mkdir recreate && echo r3 >recreate/r3 # re-create
	rm usr/bin/b && echo broken >usr/bin/b # break a hard link
	chmod 0711 etc
	chown 123:456 etc/passwd
	setfattr -n user.comment -v changed usr/bin/sg
	rm dev-null && mknod dev-null c 1 5
}

churn3() {
	rm d1 && mkdir -p d1/again && echo back >d1/again/y # file -> directory again
	mkdir -p gone && echo g2 >gone/new               # re-create deleted dir
	echo ln >usr/bin/n1 && ln usr/bin/n1 usr/bin/n2
	rm -rf f1/inner
	setfattr -x user.dir etc
	chmod 4750 usr/bin/tool
}

churn4() {
	rm -rf recreate/r3 && echo r4 >recreate/r4
	rm usr/bin/n2
	mkdir -p etc/rel.d && ln -sf rel.d etc/link-to-dir
	touch -d @1600000000 etc/passwd
}

small1() {
	mkdir -p bin etc
	echo hi >etc/motd
	printf '#!/bin/sh\n' >bin/sh
	chmod 0755 bin/sh
}

deep() { # N
	local deep_n=$1
	mkdir -p a/b/c/d
	echo "layer $deep_n" >a/b/c/d/file
	echo "$deep_n" >"a/only-$deep_n"
	[ $deep_n -gt 1 ] && rm -f "a/only-$((deep_n - 1))"
	[ $deep_n = 3 ] && rm -rf a/b/c && mkdir -p a/b/c && echo new >a/b/c/n
	[ $deep_n = 5 ] && ln a/b/c/n a/hl
	true
}

umoci new --image "$L:churn" >/dev/null
for f in churn1 churn2 churn3 churn4; do layer churn $f; done
umoci new --image "$L:small" >/dev/null
layer small small1
umoci new --image "$L:deep" >/dev/null
for n in 1 2 3 4 5 6; do layer deep deep $n; done
rm -rf "$B"
