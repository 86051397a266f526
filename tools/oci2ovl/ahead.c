// SPDX-License-Identifier: GPL-2.0
/*
 * Read-ahead: a producer that fills buffers in order, on a thread of its
 * own, while its consumer works on the buffers filled before.
 *
 * extract.c decompresses a layer this way: inflating is half the CPU time
 * of an import, and the other half (the tar parse, the writes, the
 * SHA-256 of the stream and of every file) then runs beside it on another
 * core. The producer runs at most @nbufs buffers ahead (a decompression
 * bomb stops there, while the consumer refuses it); it stops for good at
 * its first end or error, which the consumer then gets as it got the
 * data, in order. Nothing is shared but the buffers, handed over under
 * the lock: what the producer writes into its own state before it
 * returns an error is the consumer's to read once it got that error.
 *
 * Without a thread (lfs_ahead_new(..., false), or when one cannot be
 * made) the consumer calls the producer itself, one buffer at a time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "oci2ovl.h"

struct lfs_ahead {
	lfs_ahead_fill_fn fill;
	void *ctx;
	size_t nbufs, size;
	unsigned char **bufs;
	ssize_t *res; /* what fill() returned into each buffer */
	size_t head; /* the next buffer for the consumer */
	size_t tail; /* the next buffer for the producer */
	size_t filled; /* buffers filled, the consumer's included */
	bool held; /* the consumer holds bufs[head] */
	bool last; /* the producer returned its end or error */
	bool stop; /* the consumer is done: the producer stops */
	bool threaded;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t data, room;
};

static void *lfs_ahead_run(void *arg)
{
	struct lfs_ahead *a = arg;
	ssize_t r;
	size_t i;

	for (;;) {
		pthread_mutex_lock(&a->lock);
		while (!a->stop && a->filled == a->nbufs)
			pthread_cond_wait(&a->room, &a->lock);
		if (a->stop) {
			pthread_mutex_unlock(&a->lock);
			return NULL;
		}
		i = a->tail;
		pthread_mutex_unlock(&a->lock);

		r = a->fill(a->ctx, a->bufs[i], a->size);

		pthread_mutex_lock(&a->lock);
		a->res[i] = r;
		a->tail = (i + 1) % a->nbufs;
		a->filled++;
		pthread_cond_signal(&a->data);
		pthread_mutex_unlock(&a->lock);
		if (r <= 0)
			return NULL;
	}
}

/**
 * lfs_ahead_new() - a read-ahead of @nbufs buffers of @size bytes
 * @fill: fills a buffer: returns its byte count (at most @len), 0 at
 *        the end, or a negative error; it is not called again after 0
 *        or an error. With @thread it runs on the producer thread.
 * @thread: run @fill on a thread of its own (if one can be made)
 *
 * Return: the read-ahead, or NULL (errno set).
 */
struct lfs_ahead *lfs_ahead_new(size_t nbufs, size_t size,
				lfs_ahead_fill_fn fill, void *ctx, bool thread)
{
	struct lfs_ahead *a;
	size_t i;

	if (!nbufs || !size) {
		errno = EINVAL;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->fill = fill;
	a->ctx = ctx;
	a->size = size;
	a->nbufs = thread ? nbufs : 1;
	a->bufs = calloc(a->nbufs, sizeof(*a->bufs));
	a->res = calloc(a->nbufs, sizeof(*a->res));
	if (!a->bufs || !a->res)
		goto fail;
	for (i = 0; i < a->nbufs; i++) {
		a->bufs[i] = malloc(size);
		if (!a->bufs[i])
			goto fail;
	}
	if (!thread)
		return a;
	if (pthread_mutex_init(&a->lock, NULL))
		goto fail;
	if (pthread_cond_init(&a->data, NULL)) {
		pthread_mutex_destroy(&a->lock);
		goto fail;
	}
	if (pthread_cond_init(&a->room, NULL)) {
		pthread_cond_destroy(&a->data);
		pthread_mutex_destroy(&a->lock);
		goto fail;
	}
	a->threaded = !pthread_create(&a->thread, NULL, lfs_ahead_run, a);
	if (!a->threaded) {
		/* no thread to be had: the consumer fills, in its first buffer */
		pthread_cond_destroy(&a->room);
		pthread_cond_destroy(&a->data);
		pthread_mutex_destroy(&a->lock);
	}
	return a;
fail:
	lfs_ahead_free(a);
	errno = ENOMEM;
	return NULL;
}

/* without a thread: fill the one buffer, until the end or an error */
static ssize_t lfs_ahead_next_inline(struct lfs_ahead *a, const void **buf)
{
	if (a->last)
		return a->res[0];
	a->res[0] = a->fill(a->ctx, a->bufs[0], a->size);
	a->last = a->res[0] <= 0;
	*buf = a->bufs[0];
	return a->res[0];
}

/**
 * lfs_ahead_next() - the next buffer, in order; the one the last call
 * gave goes back to the producer
 *
 * Return: its byte count, with *@buf pointing at it, valid until the next
 * call; then 0 at the end or the producer's error, on every later call.
 */
ssize_t lfs_ahead_next(struct lfs_ahead *a, const void **buf)
{
	ssize_t r;

	if (!a->threaded)
		return lfs_ahead_next_inline(a, buf);
	pthread_mutex_lock(&a->lock);
	if (a->held) {
		a->held = false;
		a->head = (a->head + 1) % a->nbufs;
		a->filled--;
		pthread_cond_signal(&a->room);
	}
	while (!a->filled)
		pthread_cond_wait(&a->data, &a->lock);
	r = a->res[a->head];
	if (r > 0) {
		a->held = true;
		*buf = a->bufs[a->head];
	}
	pthread_mutex_unlock(&a->lock);
	return r;
}

/* stop the producer (after the fill it may be in) and free everything */
void lfs_ahead_free(struct lfs_ahead *a)
{
	size_t i;

	if (!a)
		return;
	if (a->threaded) {
		pthread_mutex_lock(&a->lock);
		a->stop = true;
		pthread_cond_signal(&a->room);
		pthread_mutex_unlock(&a->lock);
		pthread_join(a->thread, NULL);
		pthread_cond_destroy(&a->room);
		pthread_cond_destroy(&a->data);
		pthread_mutex_destroy(&a->lock);
	}
	for (i = 0; a->bufs && i < a->nbufs; i++)
		free(a->bufs[i]);
	free(a->bufs);
	free(a->res);
	free(a);
}
