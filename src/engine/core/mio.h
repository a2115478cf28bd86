/* SPDX-License-Identifier: MIT */
/*
 * Member I/O on behalf of a request piece, for the levels: an mpiece is one
 * member I/O, an mgroup counts several (the copies of a mirrored write).
 * Both come from per-reactor free lists (allocated on first need, then
 * reused), so the steady state does no malloc.
 */
#ifndef URAID_ENGINE_MIO_H
#define URAID_ENGINE_MIO_H

#include "engine/core/array.h"

#define MGROUP_MAX_BAD 16

struct mgroup {
	struct array_req *rq;
	int pending;                /* member I/Os not yet done */
	int good;                   /* member I/Os that succeeded */
	int result;                 /* the level's verdict */
	void (*done)(struct mgroup *g);   /* runs when pending reaches 0 */
	uint64_t sector;            /* the piece (array sectors) */
	uint32_t nsect;
	uint8_t *buf;
	/* mirrored reads: copies tried so far and copies that failed to read */
	unsigned next_copy, ncopies;
	unsigned nbad;
	uint16_t bad_slot[MGROUP_MAX_BAD];
	/* mirrored writes (mirror_io.c): which of the reactor's exclusion counters
	   the group holds, what it is (a write, a discard, write-zeroes) for when
	   it resumes after waiting behind a background unit, and the message
	   that resumes it on its own reactor (mirror.h) */
	uint8_t excl;
	uint8_t op;
	struct reactor_msg msg;
	struct mgroup *next;        /* free list, or the parked writes */
};

struct mpiece {
	struct member_io mio;
	struct array_req *rq;
	struct mgroup *grp;         /* NULL when the piece is this one I/O */
	unsigned slot;
	uint64_t member_sector;
	uint64_t array_sector;
	uint32_t nsect;
	int tries;                  /* mirrors tried (read retries) */
	void (*done)(struct mpiece *p, int res);
	struct mpiece *next;
};

struct mpiece *mpiece_get(struct array_req *rq);
void mpiece_put(struct mpiece *p);
struct mgroup *mgroup_get(struct array_req *rq);
void mgroup_put(struct mgroup *g);

/* Issue p (fields set by the caller: rq, grp, array_sector...) to slot's member. */
void mpiece_submit(struct mpiece *p, enum member_op kind, unsigned slot,
		   uint64_t member_sector, void *buf, uint32_t nsect, int rw_flags,
		   void (*done)(struct mpiece *p, int res));
/* The same to member m on the slot's behalf (its replacement); m NULL fails
 * it with -ENODEV as a slot without a member. */
void mpiece_submit_to(struct mpiece *p, enum member_op kind, unsigned slot, struct member *m,
		      uint64_t member_sector, void *buf, uint32_t nsect, int rw_flags,
		      void (*done)(struct mpiece *p, int res));

/* rw_flags for a request's member writes (RWF_DSYNC for FUA). */
int req_rw_flags(const struct array_req *rq);

/*
 * Make member sectors [sector, sector+nsect) of slot read back as zeroes
 * (zeroes) or merely discard them: a punched hole on files, BLKDISCARD or
 * written zeroes on block devices. Counts its member I/Os in g->pending and
 * calls done for each.
 */
void mio_clear_range(struct mgroup *g, unsigned slot, uint64_t sector, uint32_t nsect,
		     bool zeroes, void (*done)(struct mpiece *p, int res));
/* The same on member m for the slot (its replacement). */
void mio_clear_range_on(struct mgroup *g, unsigned slot, struct member *m, uint64_t sector,
			uint32_t nsect, bool zeroes, void (*done)(struct mpiece *p, int res));

/* A member I/O of mio_clear_range finished: first error into g->result, count it. */
void clear_member_done(struct mpiece *p, int res);

/* Count one finished member I/O of g; runs g->done when it was the last. */
void mgroup_count(struct mgroup *g, int res);

#endif
