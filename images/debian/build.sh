#!/bin/bash
# The debian image: a real distribution, built the way image builders do.
#
#   layer 1  debootstrap --variant=minbase bookworm from the mirror apt
#            uses here (DEBIAN_MIRROR overrides), trimmed like the
#            official image (no apt lists, logs, caches)
#   layer 2  RUN apt-get install $DEBIAN_PACKAGES (default npm, python3,
#            tzdata, less: some 27,000 files, most of them node modules)
#            in a chroot from the same mirror, then apt-get clean
#   layer 3  RUN rm -rf /usr/share/doc/* /usr/share/man: whiteouts for
#            every package's documentation
#   layer 4  RUN useradd, and configuration edits (apt, bash, dpkg)
#   config   Cmd: print the release and python's version; Env; WorkingDir
#
# Downloaded packages are kept in $LFS_CACHE/debootstrap so a rebuild
# does not fetch them again. The mirror's contents are not part of the
# cache key: after a point release, rebuild with --force.
#
# usage: images/debian/build.sh [--out DIR] [--force]   (see images/lib.sh)
# shellcheck source=images/lib.sh
. "$(dirname "$0")/../lib.sh"

DEBIAN_SUITE=bookworm
DEBIAN_PACKAGES=${DEBIAN_PACKAGES:-npm python3 tzdata less}

# the first bookworm mirror of this machine's apt sources
img_debian_mirror() {
	local f
	if [ -n "${DEBIAN_MIRROR:-}" ]; then
		echo "$DEBIAN_MIRROR"
		return
	fi
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v suite=$DEBIAN_SUITE '
			/^URIs:/ { uri = $2 }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) ok = 1 }
			/^[ \t]*$/ { if (ok && uri) { print uri; exit } ok = 0; uri = "" }
			END { if (ok && uri) print uri }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -n "s/^deb  *\(\[[^]]*\]  *\)\?\([^ ]*\)  *$DEBIAN_SUITE  *.*/\2/p" "$f"
	done
}

img_inputs() {
	echo "mirror $MIRROR suite $DEBIAN_SUITE packages $DEBIAN_PACKAGES"
	dpkg-query -W debootstrap
}

# img_chroot CMD...: run CMD in the rootfs with /proc, /dev and DNS, and
# without starting services, like a Dockerfile RUN
img_chroot() {
	local r=$IMG_BUNDLE/rootfs rc=0
	mount -t proc proc "$r/proc"
	mount --rbind /dev "$r/dev"
	cp /etc/resolv.conf "$r/etc/resolv.conf"
	printf '#!/bin/sh\nexit 101\n' >"$r/usr/sbin/policy-rc.d"
	chmod 755 "$r/usr/sbin/policy-rc.d"
	DEBIAN_FRONTEND=noninteractive chroot "$r" "$@" || rc=$?
	rm -f "$r/usr/sbin/policy-rc.d" "$r/etc/resolv.conf"
	img_umount_under "$r"
	return $rc
}

# what the official image removes after installing packages
img_debian_trim() {
	local r=$IMG_BUNDLE/rootfs
	rm -rf "$r"/var/lib/apt/lists/* "$r"/var/cache/apt/*.bin \
		"$r"/var/cache/apt/archives/*.deb "$r"/var/cache/ldconfig/aux-cache \
		"$r"/var/log/apt/* "$r"/var/log/*.log "$r"/var/lib/dpkg/*-old \
		"$r"/etc/hostname "$r"/etc/resolv.conf
}

img_build() {
	local r=$IMG_BUNDLE/rootfs cache=${LFS_CACHE:-$HOME/.cache/layerfs}/debootstrap
	mkdir -p "$cache"
	img_log "debootstrap --variant=minbase $DEBIAN_SUITE $MIRROR"
	debootstrap --variant=minbase --arch=amd64 --cache-dir="$cache" \
		"$DEBIAN_SUITE" "$r" "$MIRROR" >"$IMG_WORK/debootstrap.log" 2>&1 || {
		tail -n 20 "$IMG_WORK/debootstrap.log" >&2
		img_die "debootstrap failed"
	}
	img_debian_trim
	img_layer "debootstrap --variant=minbase $DEBIAN_SUITE"

	img_log "apt-get install $DEBIAN_PACKAGES"
	img_chroot sh -c "apt-get -qq -o Acquire::Check-Valid-Until=false update &&
		apt-get -qq install -y --no-install-recommends $DEBIAN_PACKAGES &&
		apt-get clean" >"$IMG_WORK/apt.log" 2>&1 || {
		tail -n 20 "$IMG_WORK/apt.log" >&2
		img_die "apt-get install failed"
	}
	img_debian_trim
	img_layer "RUN apt-get install $DEBIAN_PACKAGES"

	rm -rf "$r"/usr/share/doc/* "$r/usr/share/man"
	img_layer "RUN rm -rf /usr/share/doc/* /usr/share/man"

	img_chroot useradd --create-home --uid 1000 --shell /bin/bash app
	printf 'path-exclude /usr/share/doc/*\npath-exclude /usr/share/man/*\n' \
		>"$r/etc/dpkg/dpkg.cfg.d/excludes"
	printf 'APT::Install-Recommends "false";\n' >"$r/etc/apt/apt.conf.d/99layerfs"
	echo "alias ll='ls -l'" >>"$r/etc/bash.bashrc"
	img_debian_trim
	img_layer "RUN useradd app; configure dpkg, apt, bash"

	img_config --config.cmd python3 --config.cmd -c --config.cmd \
		"import platform, sys; print('Hello from', platform.freedesktop_os_release()['PRETTY_NAME'] + ',', 'Python', sys.version.split()[0])" \
		--config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		--config.env LANG=C.UTF-8 --config.workingdir / \
		--config.label org.opencontainers.image.title=layerfs-debian
}

MIRROR=$(img_debian_mirror | head -n 1)
[ -n "$MIRROR" ] || img_die "no $DEBIAN_SUITE mirror in /etc/apt/sources*: set DEBIAN_MIRROR"
img_main "$@"
