#!/usr/bin/env bats
# 'make install' into a DESTDIR, and DKMS building the module from what it
# installed, against the cached kernel tree.  Nothing on the host changes:
# DKMS gets a private tree, source tree and install tree, and no signing
# (sign_file names no program, so no key is made under /var/lib/dkms).
# The module is built, never loaded.

bats_require_minimum_version 1.5.0

setup() {
	REPO=$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)
	KBUILD=${LFS_CACHE:-$HOME/.cache/layerfs}/build-${FLAVOUR:-debug}
	VERSION=$(make -s -C "$REPO" --no-print-directory -f - <<<'include tools/install.mk
v: ; @echo $(LFS_VERSION)' v)
	D=$BATS_TEST_TMPDIR/root
}

# the installed tree as "MODE PATH" lines, sorted
lfs_tree() {
	(set -o pipefail; cd "$1" && find . -mindepth 1 -printf '%M %P\n' | sort -k2)
}

@test "make install puts tools, mount.layerfs, man pages and the module source under DESTDIR" {
	[[ $VERSION =~ ^[0-9]+\.[0-9]+ ]]
	run make -s -C "$REPO" install DESTDIR="$D"
	echo "$output"
	[ "$status" = 0 ]
	local src=usr/src/layerfs-$VERSION f expected
	expected=$(
		cat <<-EOF
			drwxr-xr-x sbin
			-rwxr-xr-x sbin/mount.layerfs
			drwxr-xr-x usr
			drwxr-xr-x usr/local
			drwxr-xr-x usr/local/bin
			-rwxr-xr-x usr/local/bin/layerfs-mount
			-rwxr-xr-x usr/local/bin/oci2ovl
			drwxr-xr-x usr/local/share
			drwxr-xr-x usr/local/share/man
			drwxr-xr-x usr/local/share/man/man1
			-rw-r--r-- usr/local/share/man/man1/oci2ovl.1
			drwxr-xr-x usr/local/share/man/man8
			-rw-r--r-- usr/local/share/man/man8/layerfs-mount.8
			-rw-r--r-- usr/local/share/man/man8/mount.layerfs.8
			drwxr-xr-x usr/src
			drwxr-xr-x $src
			-rw-r--r-- $src/dkms.conf
			drwxr-xr-x $src/src
		EOF
		for f in $(cd "$REPO" && git ls-files src | grep -E '/(Kbuild|[^/]*\.[ch])$' | sort); do
			echo "-rw-r--r-- $src/$f"
		done
		echo "drwxr-xr-x $src/uapi"
		echo "-rw-r--r-- $src/uapi/layerfs.h"
	)
	diff -u <(sort -k2 <<<"$expected") <(lfs_tree "$D")
	# the helper mount(8) runs is the same program, and it runs
	cmp "$D/sbin/mount.layerfs" "$REPO/build/bin/layerfs-mount"
	run "$D/sbin/mount.layerfs" --version
	[ "$output" = "mount.layerfs $VERSION" ]
	run "$D/usr/local/bin/layerfs-mount" --version
	[ "$output" = "layerfs-mount $VERSION" ]
	# sources as in the repository (an empty list would compare nothing),
	# dkms.conf with the version filled in
	local srcs
	srcs=$(set -o pipefail; cd "$REPO" && git ls-files src uapi/layerfs.h | grep -E '(Kbuild|\.[ch])$')
	for f in $srcs; do
		cmp "$REPO/$f" "$D/$src/$f"
	done
	grep -qx "PACKAGE_VERSION=\"$VERSION\"" "$D/$src/dkms.conf"
	run -1 grep -q @VERSION@ "$D/$src/dkms.conf"
	grep -q '^\.so man8/layerfs-mount\.8$' "$D/usr/local/share/man/man8/mount.layerfs.8"
}

@test "make install honours PREFIX, SBINDIR and MANDIR" {
	run make -s -C "$REPO" install-tools DESTDIR="$D" PREFIX=/usr SBINDIR=/usr/sbin
	[ "$status" = 0 ]
	[ -x "$D/usr/bin/layerfs-mount" ]
	[ -x "$D/usr/bin/oci2ovl" ]
	[ -x "$D/usr/sbin/mount.layerfs" ]
	[ -f "$D/usr/share/man/man1/oci2ovl.1" ]
	[ ! -e "$D/usr/local" ]
	[ ! -e "$D/sbin" ]
}

@test "dkms builds layerfs.ko from the installed source against the cached kernel tree" {
	[ -f "$KBUILD/include/config/kernel.release" ] || {
		echo "no kernel tree at $KBUILD: run 'make kernel'"
		return 1
	}
	local krel t=$BATS_TEST_TMPDIR dk
	krel=$(cat "$KBUILD/include/config/kernel.release")
	make -s -C "$REPO" install-dkms DESTDIR="$D"
	mkdir -p "$t/dkms" "$t/installed"
	dk=(--dkmstree "$t/dkms" --sourcetree "$D/usr/src" --installtree "$t/installed")
	run env sign_file="$t/no-sign-file" dkms add -m layerfs -v "$VERSION" "${dk[@]}"
	echo "$output"
	[ "$status" = 0 ]
	run env sign_file="$t/no-sign-file" dkms build -m layerfs -v "$VERSION" \
		-k "$krel" --kernelsourcedir "$KBUILD" "${dk[@]}"
	echo "$output"
	[ "$status" = 0 ]
	local ko=$t/dkms/layerfs/$VERSION/$krel/x86_64/module/layerfs.ko
	[ -f "$ko" ]
	[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$krel" ]
	[ "$(modinfo -F alias "$ko")" = fs-layerfs ]
	# built, not signed, not installed
	local signer left
	signer=$(modinfo -F signer "$ko")
	[ -z "$signer" ]
	left=$(ls -A "$t/installed")
	[ -z "$left" ]
}
