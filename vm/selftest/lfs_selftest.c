// SPDX-License-Identifier: GPL-2.0
/*
 * lfs_selftest: the harness's own wrongdoer.  Loaded only by harness
 * self-tests (vm/guest/init, LFS_SELFTEST), it does one thing that a test
 * run must be failed for, so that the host's checks are shown to see it:
 *
 *   leak=1         allocates memory and drops the only pointer (kmemleak)
 *   lockdep_off=1  switches the lock validator off without a message
 *   block=1        starts a thread that sleeps uninterruptibly until the
 *                  module is removed (a task left in D state)
 *
 * Never loaded by a normal test run.
 */
#define pr_fmt(fmt) "lfs_selftest: " fmt

#include <linux/debug_locks.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>

static bool leak;
module_param(leak, bool, 0444);
MODULE_PARM_DESC(leak, "leak one allocation");

static bool lfs_lockdep_off;
module_param_named(lockdep_off, lfs_lockdep_off, bool, 0444);
MODULE_PARM_DESC(lockdep_off, "switch lockdep off");

static bool block;
module_param(block, bool, 0444);
MODULE_PARM_DESC(block, "keep a thread in D state until removal");

/* the D-state thread; set at init, stopped at exit */
static struct task_struct *lfs_blocked_thread;

/* Leak through a helper the compiler cannot see through at the call site. */
static noinline void lfs_selftest_leak(void)
{
	void *lost = kmalloc(128, GFP_KERNEL);

	pr_info("leaking 128 bytes at %p on purpose\n", lost);
}

static int lfs_selftest_blocked(void *unused)
{
	for (;;) {
		set_current_state(TASK_UNINTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

static int __init lfs_selftest_init(void)
{
	if (leak)
		lfs_selftest_leak();
	if (lfs_lockdep_off && debug_locks_off())
		pr_info("lockdep switched off on purpose\n");
	if (block) {
		lfs_blocked_thread = kthread_run(lfs_selftest_blocked, NULL,
						 "lfs_selftest_d");
		if (IS_ERR(lfs_blocked_thread))
			return PTR_ERR(lfs_blocked_thread);
	}
	return 0;
}

static void __exit lfs_selftest_exit(void)
{
	if (lfs_blocked_thread)
		kthread_stop(lfs_blocked_thread);
}

module_init(lfs_selftest_init);
module_exit(lfs_selftest_exit);
MODULE_DESCRIPTION("layerfs test harness self-tests");
MODULE_LICENSE("GPL");
