// SPDX-License-Identifier: MIT
/* An array's state, for `uraid detail` and `uraid status`. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/geom.h>
#include <uraid/level.h>
#include <uraid/superblock.h>

#include "cli/progress.h"
#include "cli/status_print.h"
#include "cli/util.h"

const char *cli_member_state_name(enum uraid_member_state s)
{
	switch (s) {
	case URAID_MEMBER_IN_SYNC: return "in-sync";
	case URAID_MEMBER_FAULTY: return "faulty";
	case URAID_MEMBER_MISSING: return "missing";
	case URAID_MEMBER_SPARE: return "spare";
	case URAID_MEMBER_STALE: return "stale";
	case URAID_MEMBER_REBUILDING: return "rebuilding";
	case URAID_MEMBER_JOURNAL: return "journal";
	}
	return "unknown";
}

const char *cli_array_state(const struct uraid_array_status *st)
{
	if (st->degraded >= st->raid_disks)
		return "failed";
	if (st->resync_needed)
		return st->degraded ? "active, degraded, not synchronised" : "active, resync needed";
	if (st->degraded)
		return st->clean ? "clean, degraded" : "active, degraded";
	return st->clean ? "clean" : "active";
}

int cli_array_health(const struct uraid_array_status *st)
{
	const struct uraid_level_info *li = uraid_level_info(st->level);
	bool present[URAID_MAX_MEMBERS] = { false };

	if (!st->degraded)
		return 0;
	if (!li || !li->redundant || st->degraded >= st->raid_disks ||
	    st->raid_disks > URAID_MAX_MEMBERS)
		return 2;
	for (unsigned i = 0; i < st->nmembers; i++)
		if (st->members[i].slot >= 0 && st->members[i].slot < (int)st->raid_disks &&
		    st->members[i].state == URAID_MEMBER_IN_SYNC)
			present[st->members[i].slot] = true;
	/* which slots may be lost depends on the layout only (RAID 10's copies):
	   any size that holds whole chunks will do for the question */
	uint32_t chunk = st->chunk_bytes / 512;
	struct uraid_geom_params gp = {
		.level = st->level, .layout = st->layout, .raid_disks = st->raid_disks,
		.chunk_sectors = chunk, .dev_sectors = (uint64_t)(chunk ? chunk : 8) * 1024,
	};
	struct uraid_geom *g = malloc(sizeof(*g));
	char why[160];
	int health = 2;
	if (g && uraid_geom_init(g, &gp, why, sizeof(why)) == 0 &&
	    uraid_level_survives(g, present, NULL))
		health = 1;
	free(g);
	return health;
}

static void member_line(FILE *f, const char *slot, const struct uraid_member_status *m,
			bool counters)
{
	char rb[32], wb[32];

	fprintf(f, "    %4s  %-10s  %-6s  %s\n", slot,
		m->replacing ? "replacing" : cli_member_state_name(m->state),
		m->direct ? "yes" : "no", m->path);
	if (counters)
		fprintf(f, "              reads %" PRIu64 " (%s), writes %" PRIu64 " (%s), "
			"errors %" PRIu64 " read / %" PRIu64 " write, corrected %" PRIu64 "\n",
			m->reads, cli_bytes(m->read_bytes, rb, sizeof(rb)), m->writes,
			cli_bytes(m->write_bytes, wb, sizeof(wb)), m->read_errors, m->write_errors,
			m->corrected_reads);
}

/* Read-ahead: the window and what it did (served arrays). */
static void print_read_ahead(FILE *f, const struct uraid_read_ahead_status *ra)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32];

	if (!ra->window_bytes) {
		fprintf(f, "     Read-ahead : off\n");
		return;
	}
	fprintf(f, "     Read-ahead : %s per stream in %s units, %u of %u streams; "
		"%s read ahead, %s served from it, %s wasted%s\n",
		cli_bytes(ra->window_bytes, b1, sizeof(b1)), cli_bytes(ra->unit_bytes, b2, sizeof(b2)),
		ra->streams, ra->streams_max, cli_bytes(ra->prefetched_bytes, b3, sizeof(b3)),
		cli_bytes(ra->served_bytes, b4, sizeof(b4)),
		cli_bytes(ra->wasted_bytes, b5, sizeof(b5)),
		ra->members_in_memory ? " (members in memory: nothing to read ahead)" : "");
}

/* "resync [=======>.............]  37.5% 120.0 MiB/s, ETA 0:05 (384/1024 MiB per member)" */
static void print_background(FILE *f, const struct uraid_sync_status *s)
{

	if (!s->running && s->kind == URAID_SYNC_NONE) {
		fprintf(f, "     Background : none (limits %u..%u KiB/s)\n", s->min_kib_s,
			s->max_kib_s);
		return;
	}
	double pct = s->total_bytes ? 100.0 * (double)s->done_bytes / (double)s->total_bytes : 0;
	if (s->running) {
		char line[256];
		/* the rate is measured over a window: none yet just after a start */
		progress_format(line, sizeof(line), uraid_sync_kind_name(s->kind), s->done_bytes,
				s->total_bytes, s->array_positions, true, s->rate_bytes_s != 0,
				(double)s->rate_bytes_s);
		fprintf(f, "     Background : %s\n", line);
	} else {
		fprintf(f, "     Background : none; last %s %s at %.1f%%\n", uraid_sync_kind_name(s->kind),
			s->result == 0 ? "completed" : s->result == -ECANCELED ? "stopped" : "failed",
			pct);
	}
	if (s->kind == URAID_SYNC_CHECK || s->kind == URAID_SYNC_REPAIR)
		fprintf(f, "   Mismatch Cnt : %llu\n", (unsigned long long)s->mismatch_sectors);
	/* mdadm --detail's words: where the reshape stands in the array */
	if (s->kind == URAID_SYNC_RESHAPE && s->running)
		fprintf(f, "  Reshape Pos'n : %llu KiB of the array\n",
			(unsigned long long)(s->reshape_position_bytes >> 10));
	if (s->skipped_bytes)
		fprintf(f, "    Bitmap Skip : %llu of %llu MiB %s clean by the bitmap\n",
			(unsigned long long)(s->skipped_bytes >> 20),
			(unsigned long long)(s->done_bytes >> 20),
			s->array_positions ? "of the array" : "per member");
	fprintf(f, "    Sync Limits : %u..%u KiB/s\n", s->min_kib_s, s->max_kib_s);
}

static void json_read_ahead(struct json *j, const struct uraid_read_ahead_status *ra)
{
	json_obj_open(j, "read_ahead");
	json_bool(j, "enabled", ra->window_bytes != 0);
	json_u64(j, "window_bytes", ra->window_bytes);
	json_u64(j, "unit_bytes", ra->unit_bytes);
	json_u64(j, "streams", ra->streams);
	json_u64(j, "streams_max", ra->streams_max);
	json_bool(j, "members_in_memory", ra->members_in_memory);
	json_u64(j, "memory_bytes", ra->memory_bytes);
	json_u64(j, "prefetched_bytes", ra->prefetched_bytes);
	json_u64(j, "served_bytes", ra->served_bytes);
	json_u64(j, "served_reads", ra->served_reads);
	json_u64(j, "waited_reads", ra->waited_reads);
	json_u64(j, "wasted_bytes", ra->wasted_bytes);
	json_u64(j, "invalidated_bytes", ra->invalidated_bytes);
	json_obj_close(j);
}

static void json_background(struct json *j, const struct uraid_sync_status *s)
{
	json_arr_open(j, "background");
	if (s->running) {
		json_obj_open(j, NULL);
		json_str(j, "kind", uraid_sync_kind_name(s->kind));
		json_u64(j, "done_bytes", s->done_bytes);
		json_u64(j, "skipped_bytes", s->skipped_bytes);
		json_u64(j, "total_bytes", s->total_bytes);
		json_bool(j, "per_member", !s->array_positions);
		if (s->rate_bytes_s) {
			json_u64(j, "rate_bytes_per_s", s->rate_bytes_s);
			json_u64(j, "eta_s", (uint64_t)rate_eta_s(s->done_bytes, s->total_bytes,
								  (double)s->rate_bytes_s));
		} else {
			json_null(j, "rate_bytes_per_s");     /* not measured yet */
			json_null(j, "eta_s");
		}
		json_u64(j, "mismatch_sectors", s->mismatch_sectors);
		if (s->kind == URAID_SYNC_RESHAPE)
			json_u64(j, "reshape_position_bytes", s->reshape_position_bytes);
		json_obj_close(j);
	}
	json_arr_close(j);
	json_obj_open(j, "last_background");
	json_str(j, "kind", uraid_sync_kind_name(s->kind));
	json_bool(j, "running", s->running);
	json_str(j, "result", s->running ? "running" : s->result == 0 ? "completed"
			      : s->result == -ECANCELED ? "stopped" : "failed");
	json_u64(j, "done_bytes", s->done_bytes);
	json_u64(j, "skipped_bytes", s->skipped_bytes);
	json_u64(j, "total_bytes", s->total_bytes);
	json_bool(j, "per_member", !s->array_positions);
	json_u64(j, "mismatch_sectors", s->mismatch_sectors);
	json_obj_close(j);
	json_obj_open(j, "sync_limits");
	json_u64(j, "min_kib_per_s", s->min_kib_s);
	json_u64(j, "max_kib_per_s", s->max_kib_s);
	json_obj_close(j);
}

void cli_stripe_cache_human(FILE *f, const struct uraid_stripe_cache_status *sc,
			    unsigned members, int level)
{
	char b[32];
	const char *lv = uraid_level_name(level);

	if (!sc->used) {
		fprintf(f, "%u stripe heads (not used: %s has no stripes)\n", sc->size,
			lv ? lv : "this level");
		return;
	}
	fprintf(f, "%u stripe heads, %s (4 KiB x %u members each); %u in use, peak %u, %"
		PRIu64 " requests waited; %u keep row data, %" PRIu64 " of %" PRIu64
		" 4 KiB write units found theirs\n", sc->size, cli_bytes(sc->memory_bytes, b, sizeof(b)),
		members, sc->in_use, sc->peak, sc->waits, sc->kept, sc->hits, sc->hits + sc->misses);
}

void cli_stripe_cache_json(struct json *j, const struct uraid_stripe_cache_status *sc)
{
	json_obj_open(j, "stripe_cache");
	json_bool(j, "used", sc->used);
	json_u64(j, "size", sc->size);
	json_str(j, "unit", "stripe heads");
	json_u64(j, "memory_bytes", sc->memory_bytes);
	json_u64(j, "in_use", sc->in_use);
	json_u64(j, "peak", sc->peak);
	json_u64(j, "waits", sc->waits);
	json_u64(j, "kept", sc->kept);
	json_u64(j, "hits", sc->hits);
	json_u64(j, "misses", sc->misses);
	json_obj_close(j);
}

void cli_status_human(FILE *f, const struct uraid_array_status *st,
		      const struct cli_serve_info *srv)
{
	char b1[64], b2[64];
	const char *lv = uraid_level_name(st->level);
	const char *layout = uraid_layout_name(st->level, st->layout, b2, sizeof(b2));

	if (srv && !srv->array_only) {
		fprintf(f, "         Export : '%s' on %s%s\n", srv->export_name, srv->endpoint,
			srv->read_only ? " (read-only)" : "");
		fprintf(f, "        Control : %s (pid %ld, up %" PRIu64 " s)\n", srv->control,
			srv->pid, srv->uptime_s);
		char m1[32], m2[32], m3[32];
		fprintf(f, "    Connections : %u open of %u allowed, %" PRIu64 " since start, %"
			PRIu64 " refused; handshake timeout %u s\n", srv->connections,
			srv->max_connections, srv->connections_total, srv->refused,
			srv->handshake_timeout_s);
		fprintf(f, "  Buffer Memory : %s of %s in use (%s per connection assured), %u "
			"connection(s) waiting\n", cli_bytes(srv->buffer_bytes, m1, sizeof(m1)),
			cli_bytes(srv->max_buffer_bytes, m2, sizeof(m2)),
			cli_bytes(srv->buffer_share_bytes, m3, sizeof(m3)), srv->waiting_for_memory);
		if (srv->tls_psk || srv->tls_x509)
			fprintf(f, "            TLS : %s (%s%s%s%s)\n", srv->tls,
				srv->tls_psk ? "psk" : "", srv->tls_psk && srv->tls_x509 ? ", " : "",
				srv->tls_x509 ? "x509" : "",
				srv->tls_verify_peer ? ", client certificates verified" : "");
		else
			fprintf(f, "            TLS : %s\n", srv->tls ? srv->tls : "off");
	}
	fprintf(f, "     Array UUID : %s\n", uraid_uuid_text(st->uuid, b1, sizeof(b1)));
	fprintf(f, "           Name : %s\n", st->name);
	fprintf(f, "     Raid Level : %s\n", lv ? lv : "-unknown-");
	fprintf(f, "     Array Size : %s (%" PRIu64 " bytes)\n",
		cli_bytes(st->size_bytes, b1, sizeof(b1)), st->size_bytes);
	fprintf(f, "   Raid Devices : %u\n", st->raid_disks);
	if (layout && *layout)
		fprintf(f, "         Layout : %s\n", layout);
	if (st->chunk_bytes)
		fprintf(f, "     Chunk Size : %s\n", cli_bytes(st->chunk_bytes, b1, sizeof(b1)));
	fprintf(f, "          State : %s\n", cli_array_state(st));
	fprintf(f, "       Degraded : %u of %u slots\n", st->degraded, st->raid_disks);
	fprintf(f, "         Events : %" PRIu64 "\n", st->events);
	if (st->consistency_policy)
		fprintf(f, "Consistency Policy : %s\n", st->consistency_policy);
	if (st->journal_ring_bytes) {
		char j1[32], j2[32];
		fprintf(f, "        Journal : %s, %s of %s in use, seq %" PRIu64 ", %" PRIu64
			" cached writes not yet on the members\n",
			st->journal_mode == URAID_JOURNAL_WRITE_BACK ? "write-back" : "write-through",
			cli_bytes(st->journal_used_bytes, j1, sizeof(j1)),
			cli_bytes(st->journal_ring_bytes, j2, sizeof(j2)), st->journal_seq,
			st->journal_records);
		if (st->journal_mode == URAID_JOURNAL_WRITE_BACK || st->journal_partial_waits ||
		    st->journal_row_waits || st->journal_full_through)
			fprintf(f, "  Journal Waits : %" PRIu64 " writes not whole 4 KiB pages "
				"(the cache destaged first), %" PRIu64 " through on rows with "
				"cached pages, %" PRIu64 " through for log room\n",
				st->journal_partial_waits, st->journal_row_waits,
				st->journal_full_through);
	}
	if (st->bitmap_chunk_bytes)
		fprintf(f, "         Bitmap : internal, %s chunks, %" PRIu64 " of %" PRIu64
			" dirty%s\n", cli_bytes(st->bitmap_chunk_bytes, b1, sizeof(b1)),
			st->bitmap_dirty_bits, st->bitmap_bits,
			st->bitmap_stale ? " (out of date: every bit counts)" : "");
	const struct uraid_write_cache_status *w = &st->write_cache;
	if (w->size_bytes) {
		char wb2[32], wb3[32];
		fprintf(f, "    Write Cache : %s, %s, %s dirty\n",
			w->policy == URAID_WRITE_BACK ? "write-back" : "write-through (cache idle)",
			cli_bytes(w->size_bytes, b1, sizeof(b1)),
			cli_bytes(w->dirty_bytes, wb2, sizeof(wb2)));
		fprintf(f, "   Cache Counts : reads %" PRIu64 " hit, %" PRIu64 " missed; writes %"
			PRIu64 " cached (%" PRIu64 " overwrites), %" PRIu64 " through, %" PRIu64
			" waited; destaged %s in %" PRIu64 " writes%s\n", w->read_hits,
			w->read_misses, w->writes_cached, w->write_hits, w->writes_through,
			w->write_waits, cli_bytes(w->destaged_bytes, wb3, sizeof(wb3)),
			w->destage_writes, w->destage_errors ? ", ERRORS" : "");
	} else if (srv) {
		fprintf(f, "    Write Cache : write-through\n");
	}
	if (srv) {
		fprintf(f, "   Stripe Cache : ");
		cli_stripe_cache_human(f, &st->stripe_cache, st->raid_disks, st->level);
		fprintf(f, "      In flight : %" PRIu64 " requests\n", st->in_flight);
		print_read_ahead(f, &st->read_ahead);
		print_background(f, &srv->sync);
	}
	fprintf(f, "\n    Slot  State       Direct  Device\n");
	for (int slot = 0; slot < (int)st->raid_disks; slot++) {
		bool found = false;
		snprintf(b1, sizeof(b1), "%d", slot);
		for (unsigned i = 0; i < st->nmembers; i++) {
			if (st->members[i].slot != slot)
				continue;
			member_line(f, b1, &st->members[i], srv != NULL);
			found = true;
		}
		if (!found)
			fprintf(f, "    %4d  %-10s  %-6s  -\n", slot, "missing", "");
	}
	for (unsigned i = 0; i < st->nmembers; i++)
		if (st->members[i].slot < 0)
			member_line(f, "-", &st->members[i], srv != NULL);
}

void cli_status_json(FILE *f, const struct uraid_array_status *st,
		     const struct cli_serve_info *srv)
{
	struct json j;
	char b[64], u[40];
	const char *layout = uraid_layout_name(st->level, st->layout, b, sizeof(b));
	const char *lv = uraid_level_name(st->level);

	json_begin(&j, f);
	json_obj_open(&j, NULL);
	json_u64(&j, "version", CLI_JSON_VERSION);
	if (srv) {
		json_obj_open(&j, "server");
		json_str(&j, "export_name", srv->export_name);
		json_str(&j, "endpoint", srv->endpoint);
		json_str(&j, "control", srv->control);
		json_i64(&j, "pid", srv->pid);
		json_u64(&j, "uptime_s", srv->uptime_s);
		json_u64(&j, "connections", srv->connections);
		json_u64(&j, "max_connections", srv->max_connections);
		json_u64(&j, "connections_total", srv->connections_total);
		json_u64(&j, "connections_refusing", srv->refusing);
		json_u64(&j, "connections_refused", srv->refused);
		json_u64(&j, "handshake_timeout_s", srv->handshake_timeout_s);
		json_u64(&j, "buffer_bytes", srv->buffer_bytes);
		json_u64(&j, "max_buffer_bytes", srv->max_buffer_bytes);
		json_u64(&j, "buffer_share_bytes", srv->buffer_share_bytes);
		json_u64(&j, "connections_waiting_for_memory", srv->waiting_for_memory);
		json_bool(&j, "read_only", srv->read_only);
		json_str(&j, "tls", srv->tls ? srv->tls : "off");
		json_bool(&j, "tls_psk", srv->tls_psk);
		json_bool(&j, "tls_x509", srv->tls_x509);
		json_bool(&j, "tls_verify_peer", srv->tls_verify_peer);
		json_obj_close(&j);
	}
	json_str(&j, "array_uuid", uraid_uuid_text(st->uuid, u, sizeof(u)));
	json_str(&j, "name", st->name);
	json_str(&j, "level", lv ? lv : "unknown");
	json_u64(&j, "array_bytes", st->size_bytes);
	json_u64(&j, "raid_devices", st->raid_disks);
	if (layout)
		json_str(&j, "layout", layout);
	else
		json_null(&j, "layout");
	json_u64(&j, "chunk_bytes", st->chunk_bytes);
	json_str(&j, "state", cli_array_state(st));
	json_bool(&j, "clean", st->clean);
	json_bool(&j, "resync_needed", st->resync_needed);
	json_u64(&j, "degraded", st->degraded);
	json_u64(&j, "events", st->events);
	if (st->consistency_policy)
		json_str(&j, "consistency_policy", st->consistency_policy);
	if (st->journal_ring_bytes) {
		json_obj_open(&j, "journal");
		json_str(&j, "mode", st->journal_mode == URAID_JOURNAL_WRITE_BACK ? "write-back"
										  : "write-through");
		json_u64(&j, "ring_bytes", st->journal_ring_bytes);
		json_u64(&j, "used_bytes", st->journal_used_bytes);
		json_u64(&j, "seq", st->journal_seq);
		json_u64(&j, "records", st->journal_records);
		json_u64(&j, "partial_page_waits", st->journal_partial_waits);
		json_u64(&j, "row_waits", st->journal_row_waits);
		json_u64(&j, "full_through", st->journal_full_through);
		json_obj_close(&j);
	}
	if (st->bitmap_chunk_bytes) {
		json_obj_open(&j, "bitmap");
		json_u64(&j, "chunk_bytes", st->bitmap_chunk_bytes);
		json_u64(&j, "bits", st->bitmap_bits);
		json_u64(&j, "dirty_bits", st->bitmap_dirty_bits);
		json_bool(&j, "stale", st->bitmap_stale);
		json_u64(&j, "events_cleared", st->bitmap_events_cleared);
		json_obj_close(&j);
	} else {
		json_null(&j, "bitmap");
	}
	const struct uraid_write_cache_status *w = &st->write_cache;
	json_obj_open(&j, "write_cache");
	json_str(&j, "policy", w->policy == URAID_WRITE_BACK ? "back" : "through");
	json_u64(&j, "size_bytes", w->size_bytes);
	json_u64(&j, "dirty_bytes", w->dirty_bytes);
	json_u64(&j, "cached_bytes", w->cached_bytes);
	json_u64(&j, "read_hits", w->read_hits);
	json_u64(&j, "read_misses", w->read_misses);
	json_u64(&j, "read_hit_bytes", w->read_hit_bytes);
	json_u64(&j, "writes_cached", w->writes_cached);
	json_u64(&j, "write_hits", w->write_hits);
	json_u64(&j, "writes_through", w->writes_through);
	json_u64(&j, "write_waits", w->write_waits);
	json_u64(&j, "destage_writes", w->destage_writes);
	json_u64(&j, "destaged_bytes", w->destaged_bytes);
	json_u64(&j, "destage_errors", w->destage_errors);
	json_obj_close(&j);
	if (srv) {
		cli_stripe_cache_json(&j, &st->stripe_cache);
		json_u64(&j, "in_flight", st->in_flight);
		json_read_ahead(&j, &st->read_ahead);
		json_background(&j, &srv->sync);
	}
	json_arr_open(&j, "members");
	for (unsigned i = 0; i < st->nmembers; i++) {
		const struct uraid_member_status *m = &st->members[i];
		json_obj_open(&j, NULL);
		json_str(&j, "device", m->path);
		if (m->slot >= 0)
			json_i64(&j, "slot", m->slot);
		else
			json_null(&j, "slot");
		json_str(&j, "state", m->replacing ? "replacing" : cli_member_state_name(m->state));
		json_bool(&j, "direct_io", m->direct);
		if (srv) {
			json_u64(&j, "reads", m->reads);
			json_u64(&j, "writes", m->writes);
			json_u64(&j, "read_bytes", m->read_bytes);
			json_u64(&j, "write_bytes", m->write_bytes);
			json_u64(&j, "read_errors", m->read_errors);
			json_u64(&j, "write_errors", m->write_errors);
			json_u64(&j, "corrected_reads", m->corrected_reads);
		}
		json_obj_close(&j);
	}
	json_arr_close(&j);
	if (srv && srv->ninner) {
		/* a RAID 50/60: each inner array (a member of the RAID 0 above) */
		json_arr_open(&j, "inner");
		for (unsigned g = 0; g < srv->ninner; g++) {
			const struct uraid_array_status *in = srv->inner[g];
			const char *ilv = uraid_level_name(in->level);
			json_obj_open(&j, NULL);
			json_str(&j, "array_uuid", uraid_uuid_text(in->uuid, u, sizeof(u)));
			json_str(&j, "name", in->name);
			json_str(&j, "level", ilv ? ilv : "unknown");
			json_u64(&j, "array_bytes", in->size_bytes);
			json_u64(&j, "raid_devices", in->raid_disks);
			json_str(&j, "state", cli_array_state(in));
			json_u64(&j, "degraded", in->degraded);
			json_arr_open(&j, "members");
			for (unsigned i = 0; i < in->nmembers; i++) {
				const struct uraid_member_status *m = &in->members[i];
				json_obj_open(&j, NULL);
				json_str(&j, "device", m->path);
				if (m->slot >= 0)
					json_i64(&j, "slot", m->slot);
				else
					json_null(&j, "slot");
				json_str(&j, "state", m->replacing ? "replacing"
								   : cli_member_state_name(m->state));
				json_obj_close(&j);
			}
			json_arr_close(&j);
			json_obj_close(&j);
		}
		json_arr_close(&j);
	}
	json_obj_close(&j);
	json_end(&j);
}

void cli_summary_json(FILE *f, const struct uraid_array_status *st,
		      const struct cli_serve_info *srv)
{
	struct json j;
	const char *lv = uraid_level_name(st->level);

	json_begin(&j, f);
	json_obj_open(&j, NULL);
	json_u64(&j, "version", CLI_JSON_VERSION);
	json_str(&j, "export_name", srv->export_name);
	json_str(&j, "level", lv ? lv : "unknown");
	json_u64(&j, "array_bytes", st->size_bytes);
	json_u64(&j, "raid_devices", st->raid_disks);
	json_u64(&j, "in_sync", st->raid_disks - st->degraded);
	json_str(&j, "state", cli_array_state(st));
	json_str(&j, "endpoint", srv->endpoint);
	json_i64(&j, "pid", srv->pid);
	json_str(&j, "control", srv->control);
	json_obj_close(&j);
	json_end(&j);
}
