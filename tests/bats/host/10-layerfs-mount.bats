#!/usr/bin/env bats
# layerfs-mount's command line, on the host (no mounting here: the module
# is never loaded into the host's kernel).

setup() {
	REPO=$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)
	M=$REPO/build/bin/layerfs-mount
}

@test "layerfs-mount --version and --help answer and exit 0" {
	run "$M" --version
	[ "$status" = 0 ]
	[[ $output == "layerfs-mount "[0-9]* ]]
	run "$M" --help
	[ "$status" = 0 ]
	[[ $output == *"lowerdir+"* || $output == *"--lower DIR"* ]]
}

@test "layerfs-mount refuses bad usage with exit status 1" {
	run "$M"
	[ "$status" = 1 ]
	run "$M" /mnt
	[ "$status" = 1 ]
	[ "$output" = "layerfs-mount: no lower layer given" ]
	run "$M" -o lowerdir= /mnt
	[ "$status" = 1 ]
	[ "$output" = "layerfs-mount: empty layer path" ]
	run "$M" -L /nonexistent/list /mnt
	[ "$status" = 1 ]
	[[ $output == *"/nonexistent/list: No such file or directory" ]]
	run "$M" --bogus /mnt
	[ "$status" = 1 ]
}

@test "installed as mount.layerfs it takes mount(8)'s argument order" {
	ln -s "$M" "$BATS_TEST_TMPDIR/mount.layerfs"
	run "$BATS_TEST_TMPDIR/mount.layerfs" none
	[ "$status" = 1 ]
	[[ $output == *"usage: mount.layerfs"* || $output == "mount.layerfs: no lower layer given" ]]
	run "$BATS_TEST_TMPDIR/mount.layerfs" --version
	[[ $output == "mount.layerfs "* ]]
}
