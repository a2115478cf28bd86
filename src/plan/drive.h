/* SPDX-License-Identifier: MIT */
/*
 * What the planner knows of one drive model: its capacity, its 4 KiB random
 * IOPS and latency against the queue depth, its sequential MiB/s, its yearly
 * failure rate and its unrecoverable read error rate. It comes from a drive
 * model JSON (`uraid bench --characterise`, measured) or from a data sheet
 * given on the command line.
 *
 * A data sheet gives one IOPS figure per direction (the drive's best, at a
 * deep queue) and perhaps a QD 1 latency. The curve made from it is the
 * simplest that both figures fit, stated in docs/planner.md: below the
 * queue depth where latency x IOPS reaches the peak, IOPS grow in proportion
 * to the queue depth at the QD 1 latency; past it they stay at the peak and
 * the latency grows with the queue (Little's law). Without a latency the
 * peak is taken at every queue depth.
 */
#ifndef URAID_PLAN_DRIVE_H
#define URAID_PLAN_DRIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PLAN_MAX_QD_POINTS 16
#define PLAN_MAX_DRIVE_MODELS 8
#define PLAN_MAX_POOL 64        /* drives in a pool at most */

struct plan_curve_pt {
	double qd, iops, mean_us, p99_us;   /* p99_us 0: not known */
};

/* IOPS and latency against queue depth, qd ascending. */
struct plan_curve {
	unsigned n;
	struct plan_curve_pt pt[PLAN_MAX_QD_POINTS];
};

struct plan_drive {
	char name[64];
	bool measured;              /* from a characterisation (else a data sheet) */
	uint64_t capacity_bytes;
	struct plan_curve rand_read, rand_write;    /* 4 KiB random */
	double seq_read_mib_s, seq_write_mib_s;     /* the best of the block sizes measured */
	double afr;                 /* failures per drive-year (0.01 = 1 %); < 0: not known */
	double ure;                 /* unrecoverable errors per bit read; < 0: not known */
	double price;               /* per drive, any currency; < 0: not given */
};

/* What a member of this drive does at queue depth qd (fractional allowed). */
struct plan_drive_at {
	double iops;                /* 4 KiB operations per second */
	double mean_us, p99_us;     /* p99_us 0: not known */
};

void plan_curve_at(const struct plan_curve *c, double qd, struct plan_drive_at *out);

/*
 * A data sheet: "read_iops=N,write_iops=N,read_mib_s=N,write_mib_s=N,
 * capacity=SIZE,afr=F,ure=F[,read_lat_us=N,write_lat_us=N,price=N,name=S]".
 * afr may be given in percent ("0.44%"). 0 or -EINVAL with the reason.
 */
int plan_drive_parse_sheet(const char *s, struct plan_drive *d, char *err, size_t errlen);

/*
 * A drive model JSON document of len bytes (schema "uraid_drive_model": 1;
 * docs/planner.md): one model object, or a list of them (what
 * `uraid bench --characterise` writes for several devices: one per device,
 * in order). Up to max models into out[], *nout of them. Every number is
 * checked. 0 or -EINVAL with the reason (an element's index in a list).
 */
int plan_drive_parse_json(const char *text, size_t len, struct plan_drive *out, unsigned max,
			  unsigned *nout, char *err, size_t errlen);
/* The same from a file (at most 1 MiB). */
int plan_drive_load(const char *path, struct plan_drive *out, unsigned max, unsigned *nout,
		    char *err, size_t errlen);
/*
 * --drive-model's argument: "FILE[,afr=F,ure=F,price=N,name=S]", the keys a
 * data sheet gives and a measurement cannot, applied to every model of the
 * file (the file name ends at the first ",KEY=" of those keys).
 */
int plan_drive_load_spec(const char *spec, struct plan_drive *out, unsigned max,
			 unsigned *nout, char *err, size_t errlen);

#endif
