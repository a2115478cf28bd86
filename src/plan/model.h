/* SPDX-License-Identifier: MIT */
/*
 * The planner's performance model (docs/planner.md explains it):
 *
 * 1. I/O arithmetic: what one client I/O becomes at the members for a
 *    level, its layout, member count and chunk: how many member reads and
 *    writes, of what size, in how many phases (a read-modify-write reads,
 *    then writes), and on which members (each member's share, counted from
 *    the geometry in geom/, so every layout spreads as md spreads it).
 * 2. Queueing: the client's outstanding I/Os become outstanding member I/Os
 *    through the level's fan-out; each member at that queue depth delivers
 *    what its drive's IOPS-vs-QD curve says.
 * 3. Limits: the busiest member, the host's CPU (per client I/O, per member
 *    I/O, parity bytes at the measured ISA-L rate) and a link.
 * The array's IOPS is the lowest of those; its mean latency follows from
 * Little's law over the client's outstanding I/Os.
 *
 * Level facts come from the level descriptors (uraid/level.h) and the
 * geometry (uraid/geom.h); nothing here switches on the level number.
 */
#ifndef URAID_PLAN_MODEL_H
#define URAID_PLAN_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uraid/geom.h>
#include <uraid/level.h>

#include "bench/bench.h"
#include "plan/drive.h"

/* What the client does: access lines as the bench takes them, and its queue. */
struct plan_workload {
	char name[64];              /* a profile's name, or "custom" */
	unsigned nlines;
	struct bench_access line[BENCH_MAX_LINES];
	unsigned iodepth;           /* per job, or per drive with qd_per_drive */
	unsigned numjobs;           /* client threads (>= 1) */
	bool qd_per_drive;          /* iodepth is per member: total = iodepth x members */
};

/* The client's outstanding I/Os for an array of `members`. */
unsigned plan_workload_qd(const struct plan_workload *w, unsigned members);

#define PLAN_HOST_MAX_D 65     /* parity rates measured for data counts 1..64 */
#define PLAN_HOST_MAX_N 65     /* CPU shares measured for arrays of 1..64 members */
#define PLAN_HOST_MAX_OWN 16   /* level families whose own work was measured */
#define PLAN_HOST_MAX_PTS 16   /* member costs measured at so many queue depths */

/*
 * A level family's own CPU work per client I/O, beyond the client's own
 * work, its member I/Os and its parity arithmetic: RAID 0's mapping, a
 * mirror's write group and its exclusion, the parity path's row plan, row
 * lock and rounds. Measured on the family's smallest array (docs/planner.md,
 * --verify); may be negative where the family's path is lighter than the
 * model's counts say.
 */
struct plan_host_own {
	int level;
	uint32_t layout;
	unsigned members;           /* the array it was measured on */
	bool has_read, has_write;   /* which directions were measured */
	double read_us, write_us;
};

/*
 * The host and what lies between it and the drives; 0 means "not counted".
 * Every CPU figure is CPU time (user + system) of the process, per
 * operation; cpu_share turns them into time: each issuing thread gets that
 * many CPUs' worth of the machine (measured; 0 means one whole CPU).
 */
struct plan_host {
	unsigned cores;             /* threads issuing I/O (>= 1) */
	double cpu_share;           /* CPUs each issuing thread's I/O path gets; 0: 1 */
	double cpu_share_at[PLAN_HOST_MAX_N]; /* the same measured on an array of n
	                               members (the kernel's threads working for the
	                               member files run beside the issuer); 0: cpu_share */
	double cpu_us_per_io;       /* per client I/O (the benchmark's and engine's own work) */
	double cpu_us_per_io_write; /* per client write when measured apart; 0: cpu_us_per_io */
	double cpu_us_per_member_read, cpu_us_per_member_write;
	/* per 4 KiB member read [0] and write [1] by the I/Os outstanding on its
	   member (the kernel takes a member file's queued I/Os in one go: the
	   deeper, the less each costs), measured points by rising qd; none: the
	   figures above. Between points linear in log2(qd), flat beyond. */
	unsigned nmember_pts[2];
	struct plan_host_pt {
		double qd, us;
	} member_pt[2][PLAN_HOST_MAX_PTS];
	double cpu_us_per_member_kib[2]; /* per KiB of a member read [0] or write [1]
	                               beyond (or short of) 4 KiB: the copy; 0: none */
	double cpu_us_per_parity_write; /* per client write on a parity level whose family
	                               has no own[] entry, beyond its member I/Os and its
	                               parity arithmetic */
	unsigned nown;
	struct plan_host_own own[PLAN_HOST_MAX_OWN];
	double parity_mib_s;        /* given: one rate for every d and level; 0: the table */
	double parity_rate[2][PLAN_HOST_MAX_D]; /* measured CPU MiB/s of source data:
	                               [0] XOR, [1] P+Q, by data count d; 0: not measured */
	double link_mib_s;          /* member traffic, both directions together */
	double link_iops;           /* member I/Os per second */
};

/* CPU µs of one member read (rd) or write of `bytes` with qd I/Os
 * outstanding on its member. */
double plan_host_member_us(const struct plan_host *h, bool rd, double qd, double bytes);
/* CPU µs of a client read or write's own work (the benchmark's and engine's). */
double plan_host_client_us(const struct plan_host *h, bool rd);
/* The CPU share of an issuing thread on an array of n members. */
double plan_host_share(const struct plan_host *h, unsigned n);
/* The family's measured own work, or NULL. */
const struct plan_host_own *plan_host_own_of(const struct plan_host *h, int level,
					     uint32_t layout);

/* Measure h->parity_rate for data counts up to max_d (about 6 ms of CPU per
 * count measured; others interpolated). 0, or -1 when ISA-L failed. */
int plan_host_measure_parity(struct plan_host *h, unsigned max_d);
/* The parity rate for d data chunks and nparity (1: XOR, 2: P+Q). */
double plan_host_parity_mib_s(const struct plan_host *h, unsigned d, unsigned nparity);

/* One array to predict. */
struct plan_candidate {
	int level;
	uint32_t layout;
	unsigned members;           /* raid disks */
	unsigned spares;            /* hot spares beside them */
	uint32_t chunk_bytes;       /* 0 for levels without chunks */
};

/*
 * The shape of a candidate, from the geometry: each member's share of data
 * copies and of parity, the data chunks of a row, copies, failures always
 * survived, usable bytes.
 */
struct plan_shape {
	const struct uraid_level_info *info;
	int level;
	uint32_t layout;
	unsigned n;                 /* members */
	unsigned data_per_row;      /* data chunks of a stripe row (1 for mirrors) */
	unsigned parity;            /* parity chunks of a row */
	unsigned copies;
	unsigned max_failures;
	uint32_t chunk_bytes;
	uint64_t usable_bytes;
	uint64_t member_used_bytes;
	double copy_share[URAID_MAX_MEMBERS];   /* of data copies; sums to 1 */
	double parity_share[URAID_MAX_MEMBERS]; /* of parity chunks; sums to 1 (0 without) */
};

/*
 * The shape of c over members of member_bytes each (the smallest of the
 * pool's for levels that use equal sizes; RAID 0 and linear whole members:
 * member_bytes[i] each). 0 or -EINVAL with the reason (a layout not valid
 * for the count, too few members).
 */
int plan_shape_init(struct plan_shape *s, const struct plan_candidate *c,
		    const uint64_t *member_bytes, char *err, size_t errlen);

/* One client I/O at the members (expected counts: may be fractional). */
struct plan_member_io {
	double reads, writes;       /* member I/Os */
	double read_bytes, write_bytes;
	double parity_src_bytes;    /* bytes run through P(+Q) */
	unsigned phases;            /* 1, or 2 when it reads before it writes */
	bool rmw;                   /* a partial row chose read-modify-write */
	/* per member: expected member reads and writes of this client I/O */
	double slot_reads[URAID_MAX_MEMBERS], slot_writes[URAID_MAX_MEMBERS];
};

/*
 * What one client I/O of `bytes` (aligned to itself) does on shape s: a
 * read, a random write, or a write of a sequential stream (gathered into
 * full rows where the level has rows).
 */
void plan_member_io(const struct plan_shape *s, uint32_t bytes, bool is_read, bool sequential,
		    struct plan_member_io *io);

struct plan_perf {
	double iops, mib_s, mean_us, p99_us;
	double qd;                  /* the client's outstanding I/Os */
	double member_qd;           /* outstanding I/Os on the busiest member */
	double member_ios;          /* member I/Os per client I/O */
	double member_bytes_per_byte;
	double cpu_us;              /* host CPU time per client I/O (all terms) */
	const char *bound;          /* what limits it: "drives", "latency", "host CPU",
	                               "parity", "link" */
};

/*
 * Predict w on shape s whose member i is the drive slot_drive[i]. 0, or
 * -EINVAL when the workload is empty.
 */
int plan_predict(const struct plan_shape *s, const struct plan_drive *const *slot_drive,
		 const struct plan_workload *w, const struct plan_host *h, struct plan_perf *out);

/*
 * The host's parity rate in this thread's CPU time, measured now with ISA-L
 * (nparity 1: XOR, 2: P+Q; d data buffers of 64 KiB; the median of three
 * bursts of 2 ms CPU): MiB of source data per CPU second; 0 on failure.
 */
double plan_measure_parity_mib_s(unsigned d, unsigned nparity);

#endif
