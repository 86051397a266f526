#!/bin/bash
# The busybox image: Debian's busybox-static as a small runnable image in
# three layers that exercise what a layer stack must get right.
#
#   layer 1 (umoci repack)  /bin/busybox; applets in /bin and /sbin as hard
#                           links to it, in /usr/bin and /usr/sbin as
#                           symlinks; /etc (os-release, passwd, group, motd),
#                           /usr/share/doc, the trees layers 2 and 3 change,
#                           a user.* xattr, a file owned by uid 1000
#   layer 2 (umoci repack)  deletes /etc/motd and /usr/share/doc (whiteouts),
#                           adds a set-uid and a set-gid file, a file with
#                           three hard links, a fifo, changes and adds
#                           user.* xattrs, chowns a file
#   layer 3 (verbatim tar)  /opt/tree: directory -> file (no whiteout);
#                           /opt/node: file -> directory (whiteout + dir);
#                           /srv/data made opaque with one new file;
#                           /usr/share/doc created again; os-release 3
#   config                  entrypoint /usr/local/bin/hello, env, workdir
#
# usage: images/busybox/build.sh [--out DIR] [--force]   (see images/lib.sh)
# shellcheck source=images/lib.sh
. "$(dirname "$0")/../lib.sh"

img_inputs() {
	dpkg-query -W busybox-static
	sha256sum /bin/busybox | cut -d' ' -f1
}

img_build() {
	local r=$IMG_BUNDLE/rootfs f stage=$IMG_WORK/stage

	# layer 1: the base
	mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,etc,root,home/demo} \
		"$r"/{tmp,var/tmp,proc,sys,dev,run,usr/share/doc/busybox,srv/data/sub} \
		"$r"/{opt/tree/b,usr/local/share/lfs}
	chmod 1777 "$r/tmp" "$r/var/tmp"
	chmod 0700 "$r/root"
	install -m 0755 /bin/busybox "$r/bin/busybox"
	/bin/busybox --list-full | grep / | grep -vx bin/busybox | sort |
		while read -r f; do
			case $f in
			bin/* | sbin/*) ln "$r/bin/busybox" "$r/$f" ;;
			*) ln -s /bin/busybox "$r/$f" ;;
			esac
		done
	for f in os-release passwd group motd; do
		install -m 0644 "$IMG_DIR/$f" "$r/etc/$f"
	done
	install -m 0755 "$IMG_DIR/hello" "$r/usr/local/bin/hello"
	echo "BusyBox is free software under GPL-2; see /usr/share/doc/busybox-static" \
		>"$r/usr/share/doc/busybox/README"
	echo "busybox $(dpkg-query -W -f '${Version}' busybox-static)" \
		>"$r/usr/share/doc/busybox/VERSION"
	echo a >"$r/opt/tree/a"
	echo c >"$r/opt/tree/b/c"
	echo "a file until layer 3" >"$r/opt/node"
	for f in old1 old2 sub/old3; do
		echo "$f: hidden by layer 3's opaque /srv/data" >"$r/srv/data/$f"
	done
	echo "xattrs: user.color changes in layer 2" >"$r/usr/local/share/lfs/xattr"
	setfattr -n user.color -v blue "$r/usr/local/share/lfs/xattr"
	setfattr -n user.layer -v 1 "$r/usr/local/share/lfs/xattr"
	echo "notes of the demo user" >"$r/home/demo/notes"
	chown -R 1000:1000 "$r/home/demo"
	img_layer "base: busybox-static, /etc, trees to change"

	# layer 2: what an ordinary build step does
	rm "$r/etc/motd"
	rm -r "$r/usr/share/doc"
	printf '#!/bin/sh\necho set-uid demo\n' >"$r/usr/local/bin/suid"
	chmod 4755 "$r/usr/local/bin/suid"
	install -m 2755 -g 8 /dev/null "$r/usr/local/bin/sgid"
	echo "one file, three names" >"$r/usr/local/share/lfs/hl1"
	ln "$r/usr/local/share/lfs/hl1" "$r/usr/local/share/lfs/hl2"
	ln "$r/usr/local/share/lfs/hl1" "$r/usr/local/bin/hl3"
	mkfifo -m 0620 "$r/usr/local/share/lfs/fifo"
	setfattr -n user.color -v red "$r/usr/local/share/lfs/xattr"
	setfattr -n user.layer -v 2 "$r/usr/local/share/lfs/hl1"
	chown 1000:100 "$r/usr/local/share/lfs"
	img_layer "delete motd and docs; set-uid, hard links, fifo, xattrs"

	# layer 3: type changes and an opaque directory, written as a tar
	mkdir -p "$stage"/{opt/node,srv/data,etc,usr/share/doc}
	echo "a file since layer 3" >"$stage/opt/tree"
	touch "$stage/opt/.wh.node"
	echo "inside the directory that replaced a file" >"$stage/opt/node/inside"
	touch "$stage/srv/data/.wh..wh..opq"
	echo "the only file in /srv/data" >"$stage/srv/data/new"
	setfattr -n user.layer -v 3 "$stage/srv/data/new"
	sed 's/1/3/' "$IMG_DIR/os-release" >"$stage/etc/os-release"
	echo "recreated in layer 3 after layer 2 deleted the tree" \
		>"$stage/usr/share/doc/README"
	img_tar_layer "$stage" "replace a dir by a file and a file by a dir, opaque /srv/data"

	img_config --config.entrypoint /usr/local/bin/hello \
		--config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		--config.env "GREETING=greetings from the image config" \
		--config.workingdir /home/demo \
		--config.label org.opencontainers.image.title=layerfs-busybox
}

img_main "$@"
