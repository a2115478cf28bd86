/* SPDX-License-Identifier: MIT */
/*
 * For code inside liburaid that runs its own work on the engine's reactors
 * (the NBD server: client sockets are served by the same reactors as member
 * I/O). Everything done with these runs on the reactor's thread: post a
 * reactor_msg to get there.
 */
#ifndef URAID_ENGINE_HOST_H
#define URAID_ENGINE_HOST_H

#include <uraid/engine.h>

#include "common/log.h"
#include "io/bufpool.h"
#include "io/reactor.h"

struct reactor *engine_reactor(struct uraid_engine *e, unsigned i);
/* Where the engine's messages go (uraid_engine_opts.log). Any thread. */
const struct ulog *engine_log(const struct uraid_engine *e);
/* The reactor's buffer pool: 4096-aligned buffers up to 16 MiB, its thread only. */
struct bufpool *engine_bufpool(struct uraid_engine *e, unsigned i);

#endif
