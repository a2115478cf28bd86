// SPDX-License-Identifier: MIT
/* The I/O stream generator (see gen.h): decks of 100 cards per share. */
#include <string.h>

#include "bench/gen.h"

static void deck_fill(struct bench_deck *d, unsigned ones)
{
	for (unsigned i = 0; i < BENCH_DECK; i++)
		d->card[i] = i < ones;
	d->pos = 0;
}

/* Draw the next card: swap a random card of the rest into place. */
static inline uint8_t deck_draw(struct bench_deck *d, uint64_t *rng)
{
	unsigned pos = d->pos;
	unsigned j = pos + (unsigned)bench_rng_below(rng, BENCH_DECK - pos);
	uint8_t c = d->card[j];

	d->card[j] = d->card[pos];
	d->card[pos] = c;
	d->pos = pos + 1 == BENCH_DECK ? 0 : (uint8_t)(pos + 1);
	return c;
}

void bench_gen_init(struct bench_gen *g, const struct bench_access *line, unsigned nlines,
		    uint32_t default_align, uint64_t seed)
{
	memset(g, 0, sizeof(*g));
	g->rng = seed;
	g->nlines = nlines;
	unsigned k = 0;
	for (unsigned i = 0; i < nlines; i++) {
		g->line[i] = line[i];
		if (!g->line[i].align)
			g->line[i].align = default_align ? default_align : line[i].bytes;
		uint32_t wgt = nlines == 1 ? BENCH_DECK : line[i].weight;
		for (uint32_t n = 0; n < wgt && k < BENCH_DECK; n++)
			g->pick.card[k++] = (uint8_t)i;
		deck_fill(&g->rw[i], 100 - line[i].read_pct);
		deck_fill(&g->rnd[i], line[i].random_pct);
	}
	while (k < BENCH_DECK)          /* weights short of 100: the last line fills up */
		g->pick.card[k++] = (uint8_t)(nlines - 1);
}

void bench_gen_choose(struct bench_gen *g, struct bench_choice *c)
{
	unsigned i = g->nlines > 1 ? deck_draw(&g->pick, &g->rng) : 0;
	const struct bench_access *l = &g->line[i];

	c->line = (uint8_t)i;
	c->len = l->bytes;
	c->align = l->align;
	c->write = l->read_pct >= 100 ? false : l->read_pct == 0 ? true
		   : deck_draw(&g->rw[i], &g->rng);
	c->random = l->random_pct >= 100 ? true : l->random_pct == 0 ? false
		    : deck_draw(&g->rnd[i], &g->rng);
}
