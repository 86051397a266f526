// SPDX-License-Identifier: GPL-2.0
/* the read-ahead (ahead.c): order, end, errors, stopping, its thread */
#include <pthread.h>

#include "unit.h"

/* a producer of @n buffers, the i-th of (i % 7) * 1000 + 1 bytes of i */
struct lfs_prod {
	unsigned int n, calls;
	int fail; /* after @n buffers: 0 the end, else this error */
	bool endless; /* never ends */
	bool other_thread; /* a call ran on another thread than main's */
	pthread_t main;
	char why[32]; /* set with the error, for the consumer */
};

static ssize_t lfs_prod_fill(void *ctx, void *buf, size_t len)
{
	struct lfs_prod *p = ctx;
	unsigned int i = p->calls++;
	size_t n = (i % 7) * 1000 + 1;

	if (!pthread_equal(pthread_self(), p->main))
		p->other_thread = true;
	if (i >= p->n && !p->endless) {
		if (p->fail)
			snprintf(p->why, sizeof(p->why), "failed after %u", i);
		return p->fail;
	}
	if (n > len) /* no cmocka assert off the main thread */
		return -99;
	memset(buf, i & 0xff, n);
	return n;
}

/* consume everything; Return: the last result, the buffers in *count */
static ssize_t lfs_consume(struct lfs_ahead *a, unsigned int *count)
{
	const unsigned char *b;
	const void *buf;
	ssize_t r;
	size_t j;

	*count = 0;
	while ((r = lfs_ahead_next(a, &buf)) > 0) {
		b = buf;
		assert_int_equal(r, (*count % 7) * 1000 + 1);
		for (j = 0; j < (size_t)r; j++)
			assert_int_equal(b[j], *count & 0xff);
		(*count)++;
	}
	return r;
}

static void lfs_in_order(bool thread)
{
	struct lfs_prod p = { .n = 1000, .main = pthread_self() };
	struct lfs_ahead *a = lfs_ahead_new(4, 8192, lfs_prod_fill, &p, thread);
	const void *buf;
	unsigned int count;

	assert_non_null(a);
	assert_int_equal(lfs_consume(a, &count), 0);
	assert_int_equal(count, 1000);
	/* the end stays the end, and the producer is not asked again */
	assert_int_equal(lfs_ahead_next(a, &buf), 0);
	assert_int_equal(lfs_ahead_next(a, &buf), 0);
	assert_int_equal(p.calls, 1001);
	lfs_ahead_free(a);
	assert_int_equal(p.other_thread, thread);
}

static void test_threaded_buffers_come_in_order_then_the_end(void **state)
{
	(void)state;
	lfs_in_order(true);
}

static void test_inline_buffers_come_in_order_then_the_end(void **state)
{
	(void)state;
	lfs_in_order(false);
}

static void lfs_error(bool thread)
{
	struct lfs_prod p = { .n = 37, .fail = -5, .main = pthread_self() };
	struct lfs_ahead *a = lfs_ahead_new(3, 8192, lfs_prod_fill, &p, thread);
	const void *buf;
	unsigned int count;

	assert_non_null(a);
	/* every buffer before the error, then the error, for good */
	assert_int_equal(lfs_consume(a, &count), -5);
	assert_int_equal(count, 37);
	assert_string_equal(p.why, "failed after 37");
	assert_int_equal(lfs_ahead_next(a, &buf), -5);
	assert_int_equal(p.calls, 38);
	lfs_ahead_free(a);
}

static void test_threaded_error_comes_after_the_data_before_it(void **state)
{
	(void)state;
	lfs_error(true);
}

static void test_inline_error_comes_after_the_data_before_it(void **state)
{
	(void)state;
	lfs_error(false);
}

static void test_an_endless_producer_stops_a_few_buffers_ahead(void **state)
{
	struct lfs_prod p = { .endless = true, .main = pthread_self() };
	struct lfs_ahead *a = lfs_ahead_new(4, 8192, lfs_prod_fill, &p, true);
	const void *buf;
	struct timespec ts = { 0, 50000000L };
	int i;

	(void)state;
	assert_non_null(a);
	for (i = 0; i < 10; i++)
		assert_int_equal(lfs_ahead_next(a, &buf), (i % 7) * 1000 + 1);
	/* the producer waits with the ring full: 10 taken, 3 more filled */
	nanosleep(&ts, NULL);
	lfs_ahead_free(a);
	assert_true(p.calls >= 10);
	assert_true(p.calls <= 10 + 3);
	assert_true(p.other_thread);
}

static void test_freeing_before_reading_stops_the_producer(void **state)
{
	struct lfs_prod p = { .endless = true, .main = pthread_self() };
	struct lfs_ahead *a = lfs_ahead_new(2, 8192, lfs_prod_fill, &p, true);

	(void)state;
	assert_non_null(a);
	lfs_ahead_free(a);
	assert_true(p.calls <= 2);
}

static void test_no_buffers_is_an_error(void **state)
{
	struct lfs_prod p = { .n = 1 };

	(void)state;
	assert_null(lfs_ahead_new(0, 8192, lfs_prod_fill, &p, true));
	assert_int_equal(errno, EINVAL);
	assert_null(lfs_ahead_new(2, 0, lfs_prod_fill, &p, false));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_threaded_buffers_come_in_order_then_the_end),
		cmocka_unit_test(
			test_inline_buffers_come_in_order_then_the_end),
		cmocka_unit_test(
			test_threaded_error_comes_after_the_data_before_it),
		cmocka_unit_test(
			test_inline_error_comes_after_the_data_before_it),
		cmocka_unit_test(
			test_an_endless_producer_stops_a_few_buffers_ahead),
		cmocka_unit_test(
			test_freeing_before_reading_stops_the_producer),
		cmocka_unit_test(test_no_buffers_is_an_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
