#!/usr/bin/env bats
# The guest suite of the harness self-tests (tests/bats/host/00-harness.bats
# boots it with LFS_SELFTEST set, see vm/guest/init): a test that passes,
# and tests that fail or hang only under the self-test that asks for it.

@test "the layerfs module is loaded" {
	grep -q '^layerfs ' /proc/modules
}

@test "harness self-test: this test fails under LFS_SELFTEST=fail" {
	[[ ,$LFS_SELFTEST, == *,fail,* ]] || skip "only under LFS_SELFTEST=fail"
	false
}

@test "harness self-test: this test outlives its timeout under LFS_SELFTEST=test-hang" {
	[[ ,$LFS_SELFTEST, == *,test-hang,* ]] || skip "only under LFS_SELFTEST=test-hang"
	sleep 1000
}

@test "harness self-test: this test outlives the run's limit under LFS_SELFTEST=run-hang" {
	[[ ,$LFS_SELFTEST, == *,run-hang,* ]] || skip "only under LFS_SELFTEST=run-hang"
	sleep 100000
}
