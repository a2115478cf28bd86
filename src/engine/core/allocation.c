// SPDX-License-Identifier: MIT
/*
 * The array's allocation: which byte ranges read back as zeroes because
 * every place a read may take them from is a hole of a member file (what
 * NBD's base:allocation context reports, so that nbdcopy and qemu-img skip
 * them).
 *
 * The levels need no hook of their own: the geometry's forward map
 * (uraid_geom_map) names the places a read may use (RAID 1/10 every copy,
 * RAID 4/5/6 the data chunk only, never P or Q, linear and RAID 0 the one
 * place), and uraid_geom_chunk_left how far they stay contiguous. The rule
 * is then the same for every level: a range is a hole when at least one of
 * its places is on an in-sync member and every such place is a hole. A
 * RAID 4/5/6 data chunk whose member is failed or missing has no in-sync
 * place (its data comes from parity): data. Members being rebuilt are not
 * counted (reads go to them only where they hold the same bytes as the
 * in-sync copies).
 *
 * lseek on a file is a blocking metadata call, so reactors never make it:
 * uraid_array_allocation_submit hands the lookup to the metadata worker
 * (md/meta_worker.c, FIFO with superblock updates) and the answer comes
 * back on the asking reactor. The lookup takes meta_lock, so the member
 * set cannot change under it, and does a bounded amount of work
 * (ALLOC_MAX_STEPS chunks, ALLOC_MAX_SEEKS lseek calls, ALLOC_BUDGET_NS of
 * time, the clock read every ALLOC_CLOCK_SEEKS calls): a client that asks
 * for a terabyte, or whose members answer lseek slowly, gets a prefix and
 * asks again, and never holds the worker (or meta_lock) for long. At most
 * ALLOC_ON_WORKER lookups of an array are queued on the worker at a time
 * (the others wait in the array's alloc_wait list and are handed over by
 * the reactor that receives an answer), so that however many clients ask,
 * a superblock or bitmap update waits behind that many lookups at most.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "engine/core/array.h"
#include "engine/md/reshape_state.h"

/* One lookup's work: at most this many chunks and lseek calls, and about a
 * millisecond on the worker, which also writes the superblocks */
#define ALLOC_MAX_STEPS 16384u
#define ALLOC_MAX_SEEKS 128u
#define ALLOC_BUDGET_NS 1000000u
#define ALLOC_CLOCK_SEEKS 16u
/* An array's lookups queued on the metadata worker at a time */
#define ALLOC_ON_WORKER 1u

static inline struct array *A(struct uraid_array *ua) { return (struct array *)ua; }

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* What one lookup learnt of a member: sectors [from, to) from its data
 * offset are all a hole, or all data (to 0: nothing yet). A hole or data
 * run found once answers every chunk that falls in it with no more calls,
 * so a large hole costs one lseek per member, not one per chunk. */
struct seek_known {
	uint64_t from, to;
	bool hole;
};

/*
 * The status of member m's data area from `sector` on: *len sectors (1 ..
 * max) that are all a hole (returns true) or all data (false). Block
 * devices, and files on a file system whose lseek answers are not trusted
 * (member_open's list: a wrong hole is data a client skips), are data.
 */
static bool member_hole_run(const struct member *m, struct seek_known *k, uint64_t sector,
			    uint64_t max, uint64_t *len, unsigned *seeks)
{
	*len = max;
	if (m->blockdev || m->fd < 0 || !m->seek_trusted)
		return false;
	if (sector >= k->from && sector < k->to) {
		*len = min64(max, k->to - sector);
		return k->hole;
	}
	off_t at = (off_t)((m->base + m->data_offset + sector) * 512);
	(*seeks)++;
	off_t data = lseek(m->fd, at, SEEK_DATA);
	if (data < 0) {
		if (errno != ENXIO)
			return false;
		/* no data from here to the end of the file */
		*k = (struct seek_known){ .from = sector, .to = UINT64_MAX, .hole = true };
		return true;
	}
	if (data >= at + 512) {
		*k = (struct seek_known){ .from = sector, .to = sector + (uint64_t)(data - at) / 512,
					  .hole = true };
		*len = min64(max, k->to - sector);
		return true;
	}
	(*seeks)++;
	off_t hole = lseek(m->fd, at, SEEK_HOLE);
	if (hole < at)
		return false;
	/* data up to the hole, rounded up to a sector; data starting inside
	   this sector (hole == at) makes the sector data */
	uint64_t data_sectors = hole > at ? ((uint64_t)(hole - at) + 511) / 512 : 1;
	*k = (struct seek_known){ .from = sector, .to = sector + data_sectors, .hole = false };
	*len = min64(max, data_sectors);
	return false;
}

static int allocation(struct array *a, uint64_t off, uint64_t len, struct uraid_extent *ext,
		      unsigned max)
{
	const struct uraid_geom *g = &a->geom;
	struct uraid_loc locs[URAID_MAX_MEMBERS];
	uint64_t sec = off / 512, end = (off + len) / 512;
	unsigned n = 0, steps = 0, seeks = 0, clock_at = ALLOC_CLOCK_SEEKS;
	struct seek_known known[URAID_MAX_MEMBERS];
	uint64_t deadline = uraid_now_ns() + ALLOC_BUDGET_NS;

	memset(known, 0, sizeof(known[0]) * g->raid_disks);
	pthread_mutex_lock(&a->meta_lock);
	while (sec < end && steps++ < ALLOC_MAX_STEPS && seeks < ALLOC_MAX_SEEKS) {
		if (seeks >= clock_at) {
			/* out of time: answer what is done (at least one step is) */
			if (uraid_now_ns() >= deadline)
				break;
			clock_at = seeks + ALLOC_CLOCK_SEEKS;
		}
		/* during a reshape each side of the position has its geometry and
		   per-slot shift (md/reshape_state.h); the position moves only
		   under meta_lock, held here */
		const struct uraid_geom *gg = g;
		const uint64_t *shift = NULL;
		uint64_t stop = end;
		if (a->reshape) {
			gg = reshape_geom_at(a->reshape, sec, &shift);
			if (sec < a->reshape->position)
				stop = min64(end, a->reshape->position);
		}
		int copies = uraid_geom_map(gg, sec, locs, URAID_MAX_MEMBERS);
		uint64_t run = min64(uraid_geom_chunk_left(gg, sec), stop - sec);
		if (copies <= 0 || run == 0)
			break;          /* cannot happen inside the array; say what is known */
		bool readable = false, hole = true;
		uint64_t hole_len = run, data_len = run;
		for (int c = 0; c < copies; c++) {
			if (!slot_ok(a, locs[c].slot))
				continue;
			uint64_t l;
			readable = true;
			uint64_t at = locs[c].sector + (shift ? shift[locs[c].slot] : 0);
			if (member_hole_run(atomic_load(&a->slot[locs[c].slot].m),
					    &known[locs[c].slot], at, run, &l, &seeks)) {
				hole_len = min64(hole_len, l);
			} else {
				hole = false;
				data_len = min64(data_len, l);
			}
		}
		hole = hole && readable;
		uint64_t step = hole ? hole_len : data_len;
		uint32_t flags = hole ? URAID_EXTENT_HOLE | URAID_EXTENT_ZERO : 0;
		if (n && ext[n - 1].flags == flags) {
			ext[n - 1].length += step * 512;
		} else {
			if (n == max)
				break;
			ext[n++] = (struct uraid_extent){ .length = step * 512, .flags = flags };
		}
		sec += step;
	}
	pthread_mutex_unlock(&a->meta_lock);
	if (n == 0) {
		/* nothing looked at (a geometry that maps nothing): data, as the
		   protocols allow */
		ext[0] = (struct uraid_extent){ .length = min64(len, 512), .flags = 0 };
		n = 1;
	}
	return (int)n;
}

static int check_range(struct array *a, uint64_t off, uint64_t len, const void *ext,
		       unsigned max)
{
	uint64_t size = a->geom.array_sectors * 512;

	if (!ext || max == 0 || len == 0 || (off | len) % 512 || off > size || len > size - off)
		return -EINVAL;
	return 0;
}

int uraid_array_allocation(struct uraid_array *ua, uint64_t off, uint64_t len,
			   struct uraid_extent *ext, unsigned max)
{
	struct array *a = A(ua);
	int rc = check_range(a, off, len, ext, max);

	return rc ? rc : allocation(a, off, len, ext, max);
}

/* What the engine keeps in uraid_alloc_query.priv while the lookup runs. */
struct alloc_priv {
	struct meta_call call;          /* call.job.owner: the array */
	unsigned reactor;
	struct uraid_alloc_query *next;     /* in a->alloc_wait */
};
_Static_assert(sizeof(struct alloc_priv) <= sizeof(((struct uraid_alloc_query *)0)->priv),
	       "uraid_alloc_query.priv too small");

static struct alloc_priv *priv_of(struct uraid_alloc_query *q)
{
	return (struct alloc_priv *)(void *)q->priv;
}

static struct uraid_alloc_query *query_of(struct meta_call *c)
{
	return (struct uraid_alloc_query *)((char *)c - offsetof(struct uraid_alloc_query, priv));
}

/* On the worker. */
static int alloc_run(struct meta_call *c)
{
	struct uraid_alloc_query *q = query_of(c);
	struct alloc_priv *p = (struct alloc_priv *)q->priv;

	return allocation(p->call.job.owner, q->offset, q->length, q->extents, q->max_extents);
}

static void alloc_done(struct meta_call *c, int rc);

static void alloc_to_worker(struct array *a, struct uraid_alloc_query *q)
{
	struct alloc_priv *p = (struct alloc_priv *)q->priv;

	meta_call_submit(a->e, a, &p->call, &a->e->reactors[p->reactor].r, alloc_run, alloc_done);
}

/* On the asking reactor: the worker's slot goes to the first waiting
 * lookup (of any reactor: its answer still goes to its own), then the
 * answer to the caller, who may free q. */
static void alloc_done(struct meta_call *c, int rc)
{
	struct uraid_alloc_query *q = query_of(c);
	struct alloc_priv *p = (struct alloc_priv *)q->priv;
	struct array *a = p->call.job.owner;
	unsigned reactor = p->reactor;

	pthread_mutex_lock(&a->alloc_lock);
	struct uraid_alloc_query *next = a->alloc_wait_head;
	if (next) {
		a->alloc_wait_head = priv_of(next)->next;
		if (!a->alloc_wait_head)
			a->alloc_wait_tail = NULL;
	} else {
		a->alloc_running--;
	}
	pthread_mutex_unlock(&a->alloc_lock);
	if (next)
		alloc_to_worker(a, next);
	atomic_fetch_sub(&a->counters[reactor].in_flight, 1);
	q->done(q, rc);
}

int uraid_array_allocation_submit(struct uraid_array *ua, unsigned reactor,
				  struct uraid_alloc_query *q)
{
	struct array *a = A(ua);

	if (!q || !q->done || reactor >= a->e->nreactors)
		return -EINVAL;
	int rc = check_range(a, q->offset, q->length, q->extents, q->max_extents);
	if (rc)
		return rc;
	struct alloc_priv *p = (struct alloc_priv *)q->priv;
	memset(p, 0, sizeof(*p));
	p->call.job.owner = a;  /* again at the submit */
	p->reactor = reactor;
	/* counted as a request: uraid_array_close waits for it */
	atomic_fetch_add(&a->counters[reactor].in_flight, 1);
	pthread_mutex_lock(&a->alloc_lock);
	bool now = a->alloc_running < ALLOC_ON_WORKER;
	if (now) {
		a->alloc_running++;
	} else {
		if (a->alloc_wait_tail)
			priv_of(a->alloc_wait_tail)->next = q;
		else
			a->alloc_wait_head = q;
		a->alloc_wait_tail = q;
	}
	pthread_mutex_unlock(&a->alloc_lock);
	if (now)
		alloc_to_worker(a, q);
	return 0;
}
