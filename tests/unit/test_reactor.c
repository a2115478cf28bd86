// SPDX-License-Identifier: MIT
/*
 * reactor: many reads and writes in flight on a tmpfs file and a /tmp file,
 * overflow beyond the ring size, deferred completions in order, posts from
 * several threads, poll timeouts, reactor_is_current; receives parked on
 * silent sockets (many more than the ring) never hold back a file read, a
 * timer or a send.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/reactor.h"
#include "../support/check.h"

#define SEED 0x5eed1234u
#define BLK 4096
#define NOPS 512

struct rw_op {
	struct io_op op;
	int res;
	int done;
	unsigned order;
};

static unsigned completion_counter;

static void rw_cb(struct io_op *op, int res)
{
	struct rw_op *o = (struct rw_op *)op;

	o->res = res;
	o->done++;
	o->order = completion_counter++;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint32_t xorshift(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Poll until all n ops are done (bounded). */
static void poll_all(struct reactor *r, struct rw_op *ops, int n)
{
	for (int tries = 0; tries < 100000; tries++) {
		int left = 0;

		for (int i = 0; i < n; i++)
			left += !ops[i].done;
		if (!left)
			return;
		int rc = reactor_poll(r, -1);
		CHECK(rc >= 0, "poll: %d", rc);
	}
	CHECK(0, "operations did not complete");
}

static void test_file_io(const char *dir)
{
	char path[256];
	struct reactor r;
	struct rw_op *ops = calloc(NOPS, sizeof(*ops));
	unsigned char *buf = NULL, *rb = NULL;
	uint32_t seed = SEED;
	int fd, direct = 1;

	snprintf(path, sizeof(path), "%s/uraid-test-reactor-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0) {
		printf("skip %s: %s\n", dir, strerror(errno));
		free(ops);
		return;
	}
	close(fd);
	fd = open(path, O_RDWR | O_DIRECT);
	if (fd < 0) {
		direct = 0;
		fd = open(path, O_RDWR);
	}
	unlink(path);
	CHECK(fd >= 0, "open %s", path);
	CHECK(ftruncate(fd, (off_t)NOPS * BLK) == 0, "ftruncate");
	if (posix_memalign((void **)&buf, 4096, (size_t)NOPS * BLK) ||
	    posix_memalign((void **)&rb, 4096, (size_t)NOPS * BLK)) {
		CHECK(0, "out of memory");
		exit(1);
	}
	for (size_t i = 0; i < (size_t)NOPS * BLK; i++)
		buf[i] = (unsigned char)xorshift(&seed);

	/* a ring of 8 entries: most of the 512 writes wait in the overflow list */
	CHECK(reactor_init(&r, 0, 8) == 0, "init");
	completion_counter = 0;
	for (int i = 0; i < NOPS; i++) {
		ops[i].op.cb = rw_cb;
		reactor_write(&r, &ops[i].op, fd, buf + (size_t)i * BLK, BLK, (uint64_t)i * BLK,
			      i % 7 == 0 ? RWF_DSYNC : 0);
	}
	CHECK(r.overflow_head != NULL, "%s: expected an overflow with a ring of 8", dir);
	CHECK(completion_counter == 0, "callbacks must not run before poll");
	poll_all(&r, ops, NOPS);
	for (int i = 0; i < NOPS; i++)
		CHECK(ops[i].res == BLK && ops[i].done == 1, "%s write %d: res %d done %d", dir, i,
		      ops[i].res, ops[i].done);
	CHECK(r.in_flight == 0 && !r.overflow_head, "%s: idle after writes", dir);

	/* read back in reverse order of offsets into a second buffer */
	memset(rb, 0, (size_t)NOPS * BLK);
	memset(ops, 0, NOPS * sizeof(*ops));
	for (int i = NOPS - 1; i >= 0; i--) {
		ops[i].op.cb = rw_cb;
		reactor_read(&r, &ops[i].op, fd, rb + (size_t)i * BLK, BLK, (uint64_t)i * BLK);
	}
	poll_all(&r, ops, NOPS);
	for (int i = 0; i < NOPS; i++)
		CHECK(ops[i].res == BLK, "%s read %d: res %d", dir, i, ops[i].res);
	CHECK(memcmp(buf, rb, (size_t)NOPS * BLK) == 0, "%s: data read back differs (seed %#x)",
	      dir, SEED);

	/* fdatasync and fallocate through the ring; a bad fd gives -EBADF */
	memset(ops, 0, 3 * sizeof(*ops));
	ops[0].op.cb = ops[1].op.cb = ops[2].op.cb = rw_cb;
	reactor_fsync(&r, &ops[0].op, fd);
	reactor_fallocate(&r, &ops[1].op, fd, 0, (uint64_t)NOPS * BLK, BLK);
	reactor_read(&r, &ops[2].op, -1, rb, BLK, 0);
	poll_all(&r, ops, 3);
	CHECK(ops[0].res == 0, "%s fsync: %d", dir, ops[0].res);
	CHECK(ops[1].res == 0, "%s fallocate: %d", dir, ops[1].res);
	CHECK(ops[2].res == -EBADF, "%s bad fd: %d", dir, ops[2].res);
	struct stat st;
	CHECK(fstat(fd, &st) == 0 && st.st_size == (off_t)(NOPS + 1) * BLK, "%s: size after "
	      "fallocate %lld", dir, (long long)st.st_size);

	printf("%s: %d writes + %d reads through a ring of 8 (%s)\n", dir, NOPS, NOPS,
	       direct ? "O_DIRECT" : "buffered");
	reactor_fini(&r);
	close(fd);
	free(buf);
	free(rb);
	free(ops);
}

/* Deferred completions run in order, only from poll; one deferred from a callback runs later. */
static struct reactor *defer_r;
static struct rw_op defer_extra;

static void defer_cb(struct io_op *op, int res)
{
	rw_cb(op, res);
	if (res == 4)
		reactor_complete(defer_r, &defer_extra.op, 99);
}

static void test_deferred(void)
{
	struct reactor r;
	struct rw_op ops[10];

	CHECK(reactor_init(&r, 1, 0) == 0, "init");
	defer_r = &r;
	memset(ops, 0, sizeof(ops));
	memset(&defer_extra, 0, sizeof(defer_extra));
	defer_extra.op.cb = rw_cb;
	completion_counter = 0;
	for (int i = 0; i < 10; i++) {
		ops[i].op.cb = defer_cb;
		reactor_complete(&r, &ops[i].op, i - 5 == 0 ? -EIO : i);
	}
	CHECK(completion_counter == 0, "deferred ran before poll");
	int n = reactor_poll(&r, -1);
	CHECK(n == 10, "first poll ran %d", n);
	for (int i = 0; i < 10; i++) {
		CHECK(ops[i].done == 1 && ops[i].order == (unsigned)i, "deferred %d: order %u",
		      i, ops[i].order);
		CHECK(ops[i].res == (i == 5 ? -EIO : i), "deferred %d: res %d", i, ops[i].res);
	}
	CHECK(defer_extra.done == 0, "completion deferred by a callback ran in the same poll");
	n = reactor_poll(&r, -1);
	CHECK(n == 1 && defer_extra.done == 1 && defer_extra.res == 99, "second poll: %d", n);
	reactor_fini(&r);
}

/* Posts from several threads: every message runs once, each thread's in its order. */
#define POSTERS 4
#define POSTS 20000

struct post_msg {
	struct reactor_msg msg;
	unsigned thread, seq;
};

struct post_ctx {
	struct reactor *r;
	struct post_msg *msgs;
	unsigned thread;
	unsigned last_seq[POSTERS];
	unsigned count, bad_order, not_current;
};

static struct post_ctx *post_ctx;

static void post_fn(struct reactor *r, struct reactor_msg *m)
{
	struct post_msg *pm = (struct post_msg *)m;
	struct post_ctx *c = post_ctx;

	if (!reactor_is_current(r))
		c->not_current++;
	if (pm->seq != c->last_seq[pm->thread] + 1)
		c->bad_order++;
	c->last_seq[pm->thread] = pm->seq;
	c->count++;
}

struct poster {
	pthread_t tid;
	struct reactor *r;
	struct post_msg *msgs;
	unsigned thread;
	bool current_seen;
};

static void *poster_main(void *arg)
{
	struct poster *p = arg;

	if (reactor_is_current(p->r))
		p->current_seen = true;
	for (unsigned i = 0; i < POSTS; i++) {
		struct post_msg *pm = &p->msgs[i];

		pm->msg.fn = post_fn;
		pm->thread = p->thread;
		pm->seq = i + 1;
		reactor_post(p->r, &pm->msg);
		if (i % 1000 == 0)
			usleep(100);
	}
	return NULL;
}

static void test_posts(void)
{
	struct reactor r;
	struct post_ctx c;
	struct poster ps[POSTERS];
	struct post_msg *msgs = calloc((size_t)POSTERS * POSTS, sizeof(*msgs));

	CHECK(reactor_init(&r, 2, 32) == 0, "init");
	CHECK(!reactor_is_current(&r), "current before any poll");
	CHECK(reactor_poll(&r, 0) == 0, "empty poll");
	CHECK(reactor_is_current(&r), "not current after poll on this thread");
	memset(&c, 0, sizeof(c));
	post_ctx = &c;
	for (unsigned t = 0; t < POSTERS; t++) {
		ps[t] = (struct poster){ .r = &r, .msgs = msgs + (size_t)t * POSTS, .thread = t };
		pthread_create(&ps[t].tid, NULL, poster_main, &ps[t]);
	}
	uint64_t start = now_ms();
	while (c.count < POSTERS * POSTS && now_ms() - start < 5000) {
		int n = reactor_poll(&r, 200);
		CHECK(n >= 0, "poll %d", n);
	}
	for (unsigned t = 0; t < POSTERS; t++) {
		pthread_join(ps[t].tid, NULL);
		CHECK(!ps[t].current_seen, "reactor_is_current true on poster %u", t);
	}
	reactor_poll(&r, 0);
	CHECK(c.count == POSTERS * POSTS, "messages run: %u of %u", c.count, POSTERS * POSTS);
	CHECK(c.bad_order == 0, "%u messages out of their thread's order", c.bad_order);
	CHECK(c.not_current == 0, "%u messages ran off the reactor thread", c.not_current);
	printf("posts: %u messages from %d threads in %llu ms\n", c.count, POSTERS,
	       (unsigned long long)(now_ms() - start));
	reactor_fini(&r);
	free(msgs);
}

/* The event fd's counter (its fdinfo): the wake-ups posted and not yet read. */
static long event_count(const struct reactor *r)
{
	char path[64], line[128];
	long n = -1;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", r->event_fd);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "eventfd-count: %lx", &n) == 1)
			break;
	fclose(f);
	return n;
}

struct self_post {
	struct reactor_msg first, second;
	long count_after;               /* the event fd's counter after the second post */
	unsigned ran;
};

static void self_second(struct reactor *r, struct reactor_msg *m)
{
	struct self_post *sp = (struct self_post *)((char *)m - offsetof(struct self_post, second));
	(void)r;
	sp->ran++;
}

static void self_first(struct reactor *r, struct reactor_msg *m)
{
	struct self_post *sp = (struct self_post *)m;

	sp->ran++;
	sp->second.fn = self_second;
	reactor_post(r, &sp->second);
	sp->count_after = event_count(r);
}

/*
 * A post from the reactor's own thread (a message's callback posting the
 * next one) wakes nothing through the event fd, and still runs: the next
 * poll, even one asked to sleep, looks at the inbox first. Inside a
 * callback the event fd's read is not armed (it is again after the
 * callbacks), so its counter shows a wake-up written there.
 */
static void test_self_post(void)
{
	struct reactor r;
	struct self_post sp = { .first.fn = self_first };

	CHECK(reactor_init(&r, 3, 8) == 0, "init");
	CHECK(reactor_poll(&r, 0) == 0, "empty poll");
	CHECK(event_count(&r) == 0, "event fd counter %ld before any post", event_count(&r));
	/* outside a poll: a wake-up (another thread may poll r); the counter
	   cannot tell here, the event fd's read armed in the ring takes it */
	reactor_post(&r, &sp.first);
	CHECK(reactor_poll(&r, 0) == 1 && sp.ran == 1, "first message: ran %u", sp.ran);
	CHECK(sp.count_after == 0, "a post from a callback wrote the event fd (counter %ld)",
	      sp.count_after);
	uint64_t start = now_ms();
	CHECK(reactor_poll(&r, 10000) == 1 && sp.ran == 2, "second message: ran %u", sp.ran);
	CHECK(now_ms() - start < 5000, "the poll slept with a message in the inbox");
	reactor_fini(&r);
}

/* A post wakes a poll that sleeps with nothing in flight. */
static void *late_poster(void *arg)
{
	struct poster *p = arg;

	usleep(50 * 1000);
	p->msgs[0].msg.fn = post_fn;
	p->msgs[0].thread = 0;
	p->msgs[0].seq = 1;
	reactor_post(p->r, &p->msgs[0].msg);
	return NULL;
}

static void test_timeouts(void)
{
	struct reactor r;
	struct post_ctx c;
	struct post_msg msg;
	struct poster p;
	uint64_t t0;
	int n;

	CHECK(reactor_init(&r, 3, 16) == 0, "init");
	t0 = now_ms();
	n = reactor_poll(&r, 0);
	/* bounds generous enough for a loaded machine: they tell waiting from not */
	CHECK(n == 0 && now_ms() - t0 < 1000, "poll(0) idle: %d", n);
	t0 = now_ms();
	n = reactor_poll(&r, -1);
	CHECK(n == 0 && now_ms() - t0 < 1000, "poll(-1) idle must return at once: %d", n);
	t0 = now_ms();
	n = reactor_poll(&r, 60);
	uint64_t took = now_ms() - t0;
	CHECK(n == 0 && took >= 50 && took < 5000, "poll(60) idle: %d after %llu ms", n,
	      (unsigned long long)took);

	memset(&c, 0, sizeof(c));
	post_ctx = &c;
	p = (struct poster){ .r = &r, .msgs = &msg };
	pthread_create(&p.tid, NULL, late_poster, &p);
	t0 = now_ms();
	n = 0;
	while (n == 0 && now_ms() - t0 < 30000)
		n = reactor_poll(&r, 20000);
	took = now_ms() - t0;
	pthread_join(p.tid, NULL);
	/* woken by the post, not by the 20 s timeout */
	CHECK(n == 1 && c.count == 1 && took < 20000, "post woke poll: %d msgs after %llu ms",
	      n, (unsigned long long)took);

	/* a deferred completion makes poll(-1) not wait */
	struct rw_op op = { .op.cb = rw_cb };
	reactor_complete(&r, &op.op, 7);
	t0 = now_ms();
	n = reactor_poll(&r, 20000);
	CHECK(n == 1 && op.res == 7 && now_ms() - t0 < 20000, "deferred with timeout: %d", n);
	reactor_fini(&r);
}

/*
 * 600 receives on sockets whose peers say nothing, on a ring of 16 entries
 * (a budget of 31): a file read, a timer and a send behind them must still
 * complete, and the receives when their peers finally write.
 */
#define SILENT 600
static void test_silent_sockets(void)
{
	struct reactor r;
	static int sp[SILENT][2];
	static struct rw_op recvs[SILENT];
	static char rbuf[SILENT][8];
	struct rw_op rd = { .op.cb = rw_cb }, tm = { .op.cb = rw_cb }, snd = { .op.cb = rw_cb };
	struct __kernel_timespec ts = { .tv_nsec = 1000000 };
	char path[] = "/dev/shm/uraid-test-reactor-XXXXXX", buf[BLK] __attribute__((aligned(BLK)));
	int fd = mkstemp(path), n = 0;

	CHECK(fd >= 0 && pwrite(fd, "abcd", 4, 0) == 4, "scratch file");
	unlink(path);
	CHECK(reactor_init(&r, 4, 16) == 0, "init");
	for (n = 0; n < SILENT; n++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp[n]) != 0)
			break;
		recvs[n] = (struct rw_op){ .op.cb = rw_cb };
		reactor_recv(&r, &recvs[n].op, sp[n][0], rbuf[n], sizeof(rbuf[n]));
	}
	CHECK(n == SILENT, "only %d socket pairs (descriptor limit?)", n);
	for (int i = 0; i < 20; i++)
		reactor_poll(&r, 0);
	reactor_read(&r, &rd.op, fd, buf, BLK, 0);
	reactor_timeout(&r, &tm.op, &ts);
	struct iovec iov = { .iov_base = "x", .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	reactor_sendmsg(&r, &snd.op, n > 0 ? sp[0][1] : -1, &msg);
	for (int i = 0; i < 200 && !(rd.done && tm.done && snd.done); i++)
		reactor_poll(&r, 50);
	CHECK(rd.done == 1 && rd.res == 4, "file read behind %d parked receives: done %d res %d",
	      n, rd.done, rd.res);
	CHECK(tm.done == 1 && tm.res == -ETIME, "timer behind parked receives: done %d res %d",
	      tm.done, tm.res);
	CHECK(snd.done == 1 && snd.res == 1, "send behind parked receives: done %d res %d",
	      snd.done, snd.res);
	/* every peer speaks at once: more completions than the CQ's socket room */
	for (int i = 1; i < n; i++)
		CHECK(write(sp[i][1], "y", 1) == 1, "peer %d write", i);
	int got = 0;
	for (int i = 0; i < 400 && got < n; i++) {
		reactor_poll(&r, 20);
		got = 0;
		for (int k = 0; k < n; k++)
			got += recvs[k].done == 1 && recvs[k].res == 1;
	}
	CHECK(got == n, "%d of %d receives completed once their peers wrote", got, n);
	CHECK(r.in_flight == 0 && !r.overflow_head, "idle: %llu in flight",
	      (unsigned long long)r.in_flight);
	for (int i = 0; i < n; i++) {
		close(sp[i][0]);
		close(sp[i][1]);
	}
	close(fd);
	reactor_fini(&r);
}

int main(void)
{
	printf("test_reactor seed %#x\n", SEED);
	test_file_io("/dev/shm");
	test_file_io("/tmp");
	test_deferred();
	test_posts();
	test_self_post();
	test_timeouts();
	test_silent_sockets();
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("reactor: ok\n");
	return 0;
}
