#!/usr/bin/env bats
# Smoke: the module loads, registers layerfs, and unloads.

@test "the layerfs module is loaded" {
	grep -q '^layerfs ' /proc/modules
}

@test "/proc/filesystems lists layerfs" {
	grep -qP '^nodev\tlayerfs$' /proc/filesystems
}

@test "the module unloads, unregisters layerfs, and loads again" {
	rmmod layerfs
	run grep -w layerfs /proc/filesystems
	insmod "$LFS_REPO/src/layerfs.ko"
	[ "$status" = 1 ]
	grep -qw layerfs /proc/filesystems
}
