// SPDX-License-Identifier: MIT
/*
 * One served array's metrics in Prometheus' text format (metrics_text.h),
 * from what the engine and the NBD server count already: the array's
 * status, its write cache, its background work, its members' counters, the
 * NBD server's usage and the engine's request latency histogram. Each
 * family is written whole (HELP, TYPE, its samples), as the format wants;
 * every sample carries array="EXPORT" and uuid="UUID", so that the
 * families of several arrays can be merged (metrics_all.c). Names follow
 * Prometheus' habits: uraid_ prefix, the unit as a suffix, counters ending
 * in _total.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/engine.h>
#include <uraid/geom.h>
#include <uraid/nested.h>
#include <uraid/superblock.h>

#include "cli/metrics_all.h"
#include "cli/metrics_http.h"
#include "cli/metrics_text.h"
#include "cli/serve.h"
#include "cli/status_print.h"
#include "common/clock.h"
#include "nbd/server.h"

/* The labels every sample of the array carries, escaped. */
struct ctx {
	FILE *f;
	char base[1200];
};

/* The length of the valid UTF-8 sequence at s (1..4), or 0 when it is not
 * one (a stray or overlong byte, a surrogate, past U+10FFFF, cut short). */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;              /* overlong */
	else if (c == 0xed)
		hi = 0x9f;              /* surrogates */
	else if (c == 0xf0)
		lo = 0x90;              /* overlong */
	else if (c == 0xf4)
		hi = 0x8f;              /* past U+10FFFF */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/*
 * A label value as the format wants it: backslash, quote and newline
 * escaped, and valid UTF-8, which the format requires (a path or an export
 * name may hold any bytes): each byte that does not start a valid sequence
 * becomes U+FFFD, so that one odd name does not make the whole page
 * unreadable. Cut at a whole character when buf is full.
 */
static void escaped(char *buf, size_t len, const char *str)
{
	static const char replacement[] = "\xef\xbf\xbd";       /* U+FFFD */
	const unsigned char *s = (const unsigned char *)str;
	size_t o = 0;

	while (*s) {
		size_t n = utf8_len(s);
		const char *out = (const char *)s;
		size_t out_len = n, used = n ? n : 1;
		if (*s == '\\' || *s == '"')
			out = *s == '"' ? "\\\"" : "\\\\", out_len = 2;
		else if (*s == '\n')
			out = "\\n", out_len = 2;
		else if (!n)
			out = replacement, out_len = 3;
		if (o + out_len >= len)
			break;
		memcpy(buf + o, out, out_len);
		o += out_len;
		s += used;
	}
	if (len)
		buf[o] = 0;
}

static void family(struct ctx *c, const char *name, const char *type, const char *help)
{
	fprintf(c->f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{base[,extra]} value */
static void sample(struct ctx *c, const char *name, const char *extra, uint64_t v)
{
	fprintf(c->f, "%s{%s%s%s} %" PRIu64 "\n", name, c->base, extra ? "," : "",
		extra ? extra : "", v);
}

static void sample_f(struct ctx *c, const char *name, const char *extra, double v)
{
	fprintf(c->f, "%s{%s%s%s} %.9g\n", name, c->base, extra ? "," : "", extra ? extra : "",
		v);
}

/* A count of nanoseconds as seconds, exactly (a double would round sums
 * past 2^53 ns, 104 days): whole seconds, then nine digits. */
static void sample_seconds(struct ctx *c, const char *name, const char *extra, uint64_t ns)
{
	fprintf(c->f, "%s{%s%s%s} %" PRIu64 ".%09" PRIu64 "\n", name, c->base, extra ? "," : "",
		extra ? extra : "", ns / 1000000000u, ns % 1000000000u);
}

static void gauge(struct ctx *c, const char *name, const char *help, uint64_t v)
{
	family(c, name, "gauge", help);
	sample(c, name, NULL, v);
}

static void array_families(struct ctx *c, const struct uraid_array_status *as)
{
	char layout[64], extra[256];
	const char *lv = uraid_level_name(as->level);
	const char *ln = uraid_layout_name(as->level, as->layout, layout, sizeof(layout));

	family(c, "uraid_array_info", "gauge", "The array's geometry in labels; always 1.");
	snprintf(extra, sizeof(extra), "level=\"%s\",layout=\"%s\",chunk_bytes=\"%" PRIu32 "\"",
		 lv ? lv : "unknown", ln ? ln : "", as->chunk_bytes);
	sample(c, "uraid_array_info", extra, 1);
	gauge(c, "uraid_array_size_bytes", "Size of the array as exported.", as->size_bytes);
	gauge(c, "uraid_array_raid_disks", "Slots of the array (md's raid_disks).",
	      as->raid_disks);
	gauge(c, "uraid_array_degraded_slots", "Slots without an in-sync member.", as->degraded);
	family(c, "uraid_array_state", "gauge",
	       "1 where the array is in the state: clean (the superblocks say clean), active "
	       "(not clean: the superblocks say dirty, as writes are pending or recent), "
	       "resync_needed (redundancy not known good), read_only.");
	sample(c, "uraid_array_state", "state=\"clean\"", as->clean);
	sample(c, "uraid_array_state", "state=\"active\"", !as->clean);
	sample(c, "uraid_array_state", "state=\"resync_needed\"", as->resync_needed);
	sample(c, "uraid_array_state", "state=\"read_only\"", as->read_only);
	family(c, "uraid_array_events_total", "counter",
	       "The superblocks' event count (md's Events): kept on disk, so it goes on from "
	       "its value there rather than from zero; grows at every change of state.");
	sample(c, "uraid_array_events_total", NULL, as->events);
	gauge(c, "uraid_array_in_flight_requests", "Requests being served now.", as->in_flight);
	if (as->bitmap_chunk_bytes) {
		gauge(c, "uraid_array_bitmap_bits", "Bits of the write-intent bitmap.",
		      as->bitmap_bits);
		gauge(c, "uraid_array_bitmap_dirty_bits",
		      "Bits of the write-intent bitmap set on disk (chunks a resync would redo).",
		      as->bitmap_dirty_bits);
	}
}

/* A counter family per field of a status struct: its name, help and offset. */
struct counter_field {
	const char *name, *help;
	size_t off;
};

static void counter_fields(struct ctx *c, const struct counter_field *f, size_t n,
			   const void *st)
{
	for (size_t i = 0; i < n; i++) {
		family(c, f[i].name, "counter", f[i].help);
		sample(c, f[i].name, NULL, *(const uint64_t *)((const char *)st + f[i].off));
	}
}

/* Read-ahead (engine/cache/readahead.c): uraid_read_ahead_*. */
static void read_ahead_families(struct ctx *c, const struct uraid_read_ahead_status *ra)
{
	static const struct counter_field counters[] = {
#define C(n, f, h) { "uraid_read_ahead_" n, h, offsetof(struct uraid_read_ahead_status, f) }
		C("prefetched_bytes_total", prefetched_bytes, "Bytes read ahead from the members."),
		C("served_bytes_total", served_bytes, "Bytes of client reads copied from read-ahead."),
		C("served_reads_total", served_reads, "Client reads answered whole from read-ahead."),
		C("waited_reads_total", waited_reads,
		  "Client reads that waited for a prefetch in flight (read-ahead not far enough ahead)."),
		C("wasted_bytes_total", wasted_bytes,
		  "Bytes read ahead, then dropped unread (a write over them, or eviction)."),
		C("invalidated_bytes_total", invalidated_bytes,
		  "Bytes read ahead or being read ahead, dropped by a write over them."),
#undef C
	};

	gauge(c, "uraid_read_ahead_window_bytes",
	      "Read-ahead window per sequential stream; 0: read-ahead is off.", ra->window_bytes);
	gauge(c, "uraid_read_ahead_memory_bytes", "Buffers set aside for read-ahead.",
	      ra->memory_bytes);
	gauge(c, "uraid_read_ahead_streams", "Sequential streams holding a window now.",
	      ra->streams);
	counter_fields(c, counters, sizeof(counters) / sizeof(counters[0]), ra);
}

/*
 * The write cache (issue 19): its policy, memory, dirty bytes and what it
 * absorbed and destaged. Present for every array, all zero but the policy
 * while it is write-through and no cache was ever set up, so that a
 * dashboard's queries do not change with the policy.
 */
static void write_cache_families(struct ctx *c, const struct uraid_write_cache_status *w)
{
	static const struct counter_field counters[] = {
#define W(n, f, h) { "uraid_write_cache_" n, h, offsetof(struct uraid_write_cache_status, f) }
		W("read_hits_total", read_hits, "Reads served from the write cache whole."),
		W("read_misses_total", read_misses,
		  "Reads that went to the members (dirty cached data laid over them)."),
		W("read_hit_bytes_total", read_hit_bytes, "Bytes read from the write cache."),
		W("writes_cached_total", writes_cached, "Writes acknowledged from the write cache."),
		W("write_hits_total", write_hits,
		  "Cached writes onto data already dirty in the cache (overwrites absorbed)."),
		W("writes_through_total", writes_through,
		  "Writes sent through to the members (FUA, large writes, discards, zeroes)."),
		W("write_waits_total", write_waits,
		  "Writes that waited for room in the cache (destaging behind)."),
		W("destage_writes_total", destage_writes, "Writes the cache sent to the members."),
		W("destaged_bytes_total", destaged_bytes, "Bytes the cache wrote to the members."),
		W("destage_errors_total", destage_errors,
		  "Destage writes that failed (their data is lost; the next FLUSH fails)."),
#undef W
	};

	family(c, "uraid_write_cache_policy", "gauge",
	       "1 for the write policy in force, 0 for the other, label policy: through or back.");
	sample(c, "uraid_write_cache_policy", "policy=\"through\"",
	       w->policy != URAID_WRITE_BACK);
	sample(c, "uraid_write_cache_policy", "policy=\"back\"", w->policy == URAID_WRITE_BACK);
	gauge(c, "uraid_write_cache_size_bytes", "Memory of the write cache (0: none).",
	      w->size_bytes);
	gauge(c, "uraid_write_cache_dirty_bytes",
	      "Bytes acknowledged to clients and not yet on the members.", w->dirty_bytes);
	gauge(c, "uraid_write_cache_cached_bytes", "Bytes held in the write cache, dirty or not.",
	      w->cached_bytes);
	counter_fields(c, counters, sizeof(counters) / sizeof(counters[0]), w);
}

static void sync_families(struct ctx *c, const struct uraid_sync_status *ss)
{
	static const enum uraid_sync_kind kinds[] = {
		URAID_SYNC_NONE, URAID_SYNC_RESYNC, URAID_SYNC_CHECK, URAID_SYNC_REPAIR,
		URAID_SYNC_RECOVER, URAID_SYNC_REPLACE, URAID_SYNC_RESHAPE,
	};
	char extra[64];

	family(c, "uraid_sync_action", "gauge",
	       "1 for the background work running now (kind none: nothing runs), as md's "
	       "sync_action.");
	for (unsigned i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		bool on = ss->running ? ss->kind == kinds[i] : kinds[i] == URAID_SYNC_NONE;
		snprintf(extra, sizeof(extra), "kind=\"%s\"", uraid_sync_kind_name(kinds[i]));
		sample(c, "uraid_sync_action", extra, on);
	}
	gauge(c, "uraid_sync_running", "1 while background work runs.", ss->running);
	/* the running job, or the last one */
	gauge(c, "uraid_sync_done_bytes",
	      "Bytes the running or last background job has done (per member, or of the "
	      "array for a RAID 10 resync, check or repair).", ss->done_bytes);
	gauge(c, "uraid_sync_total_bytes",
	      "Bytes the running or last background job has to do, in the same units.",
	      ss->total_bytes);
	family(c, "uraid_sync_progress_ratio", "gauge",
	       "Done over total of the running or last background job, 0 to 1.");
	sample_f(c, "uraid_sync_progress_ratio", NULL,
		 ss->total_bytes ? (double)ss->done_bytes / (double)ss->total_bytes : 0.0);
	gauge(c, "uraid_sync_rate_bytes_per_second",
	      "Recent rate of the running background job (per member); 0 when none runs.",
	      ss->running ? ss->rate_bytes_s : 0);
	gauge(c, "uraid_sync_mismatch_sectors",
	      "Sectors the last check or repair found differing: md's mismatch_cnt, in md's "
	      "unit (512-byte sectors) so that it compares with md's.",
	      ss->mismatch_sectors);
	family(c, "uraid_sync_jobs_started_total", "counter",
	       "Background jobs started since the array was assembled.");
	sample(c, "uraid_sync_jobs_started_total", NULL, ss->job);
	gauge(c, "uraid_sync_speed_min_bytes_per_second",
	      "Rate background work keeps per member while clients are busy.",
	      (uint64_t)ss->min_kib_s * 1024);
	gauge(c, "uraid_sync_speed_max_bytes_per_second",
	      "Rate background work goes up to per member when clients are idle.",
	      (uint64_t)ss->max_kib_s * 1024);
}

/* One member's labels: member="PATH",slot="N" (slot "" for spares). */
static void member_labels(char *buf, size_t len, const struct uraid_member_status *m)
{
	char path[600], slot[16] = "";
	escaped(path, sizeof(path), m->path);
	if (m->slot >= 0)
		snprintf(slot, sizeof(slot), "%d", m->slot);
	snprintf(buf, len, "member=\"%s\",slot=\"%s\"", path, slot);
}

static void member_families(struct ctx *c, const struct uraid_array_status *as)
{
	static const enum uraid_member_state states[] = {
		URAID_MEMBER_IN_SYNC, URAID_MEMBER_FAULTY, URAID_MEMBER_MISSING,
		URAID_MEMBER_SPARE, URAID_MEMBER_STALE, URAID_MEMBER_REBUILDING,
		URAID_MEMBER_JOURNAL,
	};
	static const struct counter_field counters[] = {
#define C(n, f, h) { "uraid_member_" n, h, offsetof(struct uraid_member_status, f) }
		C("reads_total", reads, "Reads issued to the member."),
		C("writes_total", writes, "Writes issued to the member."),
		C("read_bytes_total", read_bytes, "Bytes read from the member."),
		C("written_bytes_total", write_bytes, "Bytes written to the member."),
		C("read_errors_total", read_errors, "Reads of the member that failed."),
		C("write_errors_total", write_errors, "Writes of the member that failed."),
		C("corrected_reads_total", corrected_reads,
		  "Read errors answered from redundancy and rewritten (md's errors)."),
#undef C
	};
	char labels[700], extra[800];

	family(c, "uraid_member_state", "gauge",
	       "1 for the member's state (in-sync, faulty, missing, spare, stale, rebuilding), "
	       "0 for the others.");
	for (unsigned i = 0; i < as->nmembers; i++) {
		const struct uraid_member_status *m = &as->members[i];
		member_labels(labels, sizeof(labels), m);
		for (unsigned s = 0; s < sizeof(states) / sizeof(states[0]); s++) {
			snprintf(extra, sizeof(extra), "%s,state=\"%s\"", labels,
				 cli_member_state_name(states[s]));
			sample(c, "uraid_member_state", extra, m->state == states[s]);
		}
	}
	for (unsigned k = 0; k < sizeof(counters) / sizeof(counters[0]); k++) {
		family(c, counters[k].name, "counter", counters[k].help);
		for (unsigned i = 0; i < as->nmembers; i++) {
			const struct uraid_member_status *m = &as->members[i];
			if (m->state == URAID_MEMBER_MISSING && !m->path[0])
				continue;       /* nothing there to count */
			uint64_t v;
			memcpy(&v, (const char *)m + counters[k].off, sizeof(v));
			member_labels(labels, sizeof(labels), m);
			sample(c, counters[k].name, labels, v);
		}
	}
}

static void nbd_families(struct ctx *c, struct nbd_server *s)
{
	struct nbd_server_usage u;
	nbd_server_usage(s, &u);
	gauge(c, "uraid_nbd_connections", "NBD clients served now.", u.connections);
	gauge(c, "uraid_nbd_max_connections", "NBD clients served at once at most.",
	      u.max_connections);
	family(c, "uraid_nbd_connections_total", "counter", "NBD clients served since start.");
	sample(c, "uraid_nbd_connections_total", NULL, nbd_server_connections_total(s));
	family(c, "uraid_nbd_refused_total", "counter",
	       "NBD clients refused since start (over the connection limit).");
	sample(c, "uraid_nbd_refused_total", NULL, u.refused);
	gauge(c, "uraid_nbd_buffer_bytes", "Request buffers held by NBD clients now.",
	      u.buffer_bytes);
	gauge(c, "uraid_nbd_max_buffer_bytes", "Request buffers NBD clients may hold together.",
	      u.max_buffer_bytes);
	gauge(c, "uraid_nbd_waiting_for_memory",
	      "NBD clients with a request waiting for buffer memory.", u.waiting_for_memory);
}

static void latency_family(struct ctx *c, const struct uraid_latency_hist *h)
{
	static const char name[] = "uraid_request_duration_seconds";
	char extra[128];

	family(c, name, "histogram",
	       "Time array requests took, from reaching their reactor to their completion.");
	for (unsigned k = 0; k < URAID_LATENCY_KINDS; k++) {
		const char *kn = uraid_latency_kind_name(k);
		uint64_t cum = 0;
		for (unsigned b = 0; b < URAID_LATENCY_BUCKETS; b++) {
			cum += h->count[k][b];
			if (b + 1 < URAID_LATENCY_BUCKETS)
				snprintf(extra, sizeof(extra), "kind=\"%s\",le=\"%.9g\"", kn,
					 (double)uraid_latency_bucket_le_ns(b) / 1e9);
			else
				snprintf(extra, sizeof(extra), "kind=\"%s\",le=\"+Inf\"", kn);
			sample(c, "uraid_request_duration_seconds_bucket", extra, cum);
		}
		snprintf(extra, sizeof(extra), "kind=\"%s\"", kn);
		sample_seconds(c, "uraid_request_duration_seconds_sum", extra, h->sum_ns[k]);
		sample(c, "uraid_request_duration_seconds_count", extra, cum);
	}
}

int metrics_write(FILE *out, const struct metrics_source *src)
{
	struct uraid_array_status *as = malloc(sizeof(*as));
	struct uraid_latency_hist *h = malloc(sizeof(*h));
	struct uraid_sync_status ss;
	struct ctx c = { .f = out };
	char name[600], uuid[64];

	if (!as || !h || uraid_array_status(src->array, as) != 0) {
		free(as);
		free(h);
		return -ENOMEM;
	}
	uraid_array_sync_status(src->array, &ss);
	uraid_array_latency(src->array, h);
	escaped(name, sizeof(name), src->export_name);
	snprintf(c.base, sizeof(c.base), "array=\"%s\",uuid=\"%s\"", name,
		 uraid_uuid_text(as->uuid, uuid, sizeof(uuid)));
	array_families(&c, as);
	write_cache_families(&c, &as->write_cache);
	read_ahead_families(&c, &as->read_ahead);
	sync_families(&c, &ss);
	member_families(&c, as);
	if (src->server)
		nbd_families(&c, src->server);
	latency_family(&c, h);
	free(as);
	free(h);
	return ferror(out) ? -ENOMEM : 0;
}

static int write_source(void *src, FILE *out)
{
	return metrics_write(out, src);
}

/*
 * A RAID 50/60: the RAID 0's page (text) and each inner array's (labelled
 * array="EXPORT/INNER", without the NBD families: the RAID 0 is what is
 * served), merged so that each family's HELP and TYPE appear once. The
 * merged page replaces *text. 0 or -ENOMEM.
 */
static int nested_page(const struct serve_state *st, char **text, size_t *len)
{
	unsigned n = st->nested->groups + 1;
	char **texts = calloc(n, sizeof(*texts)), label[URAID_NESTED_MAX_GROUPS][320];
	char *merged = NULL;
	size_t mlen = 0, ilen;
	int rc = texts ? 0 : -ENOMEM;

	if (rc)
		return rc;
	texts[0] = *text;
	for (unsigned g = 0; g < st->nested->groups && !rc; g++) {
		snprintf(label[g], sizeof(label[g]), "%s/%s", st->export_name,
			 st->nested->inner_name[g]);
		struct metrics_source src = { .array = st->nested->inner[g], .export_name = label[g] };
		rc = metrics_render(write_source, &src, &texts[g + 1], &ilen);
	}
	FILE *f = rc ? NULL : open_memstream(&merged, &mlen);
	if (!rc && !f)
		rc = -ENOMEM;
	if (f) {
		rc = metrics_merge(f, (const char *const *)texts, n);
		if (fclose(f) != 0 && !rc)
			rc = -ENOMEM;
	}
	for (unsigned i = 1; i < n; i++)
		free(texts[i]);
	free(texts);
	if (rc) {
		free(merged);
		return rc;
	}
	free(*text);
	*text = merged;
	*len = mlen;
	return 0;
}

int metrics_serve_page(struct serve_state *st, const char **page, size_t *len)
{
	uint64_t now = uraid_now_ns();

	if (!st->metrics_page || now - st->metrics_page_ns >= METRICS_PAGE_CACHE_MS * 1000000ull) {
		struct metrics_source src = { .array = st->array, .export_name = st->export_name,
					      .server = st->server };
		char *text;
		size_t text_len;
		int rc = metrics_render(write_source, &src, &text, &text_len);
		if (rc == 0 && st->nested && (rc = nested_page(st, &text, &text_len)))
			free(text);
		if (rc)
			return rc;
		free(st->metrics_page);
		st->metrics_page = text;
		st->metrics_page_len = text_len;
		st->metrics_page_ns = now;
	}
	*page = st->metrics_page;
	*len = st->metrics_page_len;
	return 0;
}

int metrics_serve_body(void *serve_state, FILE *out)
{
	const char *page;
	size_t len;
	int rc = metrics_serve_page(serve_state, &page, &len);
	if (rc)
		return rc;
	return fwrite(page, 1, len, out) == len ? 0 : -ENOMEM;
}
