/* The amdgpu cards' sysfs: see amdsys.h.  Moved from gpuact.c (issue
 * 19, item 5), and read once a tick for every process. */
#include "config.h"
#include "amdsys.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* amdgpu gpu_metrics (amdgpu_pm.c, "gpu_metrics: ... a snapshot of all
 * the metrics the SMU firmware exposes"): a binary blob, a
 * struct gpu_metrics_vX_Y of Linux drivers/gpu/drm/amd/include/
 * kgd_pp_interface.h, after its 4-byte struct metrics_table_header
 * {u16 structure_size; u8 format_revision; u8 content_revision}.
 * Format 1 is a dGPU's.  Byte offsets of the three u16 fields read here,
 * worked out from those declarations with the x86-64 ABI's alignment
 * (u64 on 8 bytes), little-endian:
 *
 *   revision  average_gfx_activity  average_umc_activity  average_socket_power
 *   1.0           28                    30                    34
 *   1.1-1.3       16                    18                    22
 *
 * v1_0 puts the u64 system_clock_counter right after the header (so 4
 * bytes of padding, then it at 8, six u16 temperatures at 16..27);
 * v1_1, v1_2 and v1_3 start with the six temperatures at 4 and move the
 * timestamp after energy_accumulator.  Activities are %, socket power W.
 * A field the firmware does not fill reads 0xFFFF.  v1_4 and later
 * (MI300) and format 2 (APUs) are laid out otherwise: not read, and
 * said so. */
#define AMD_METRICS_NA 0xFFFFu

static unsigned le16(const unsigned char *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

bool gp_amd_metrics_parse(const unsigned char *buf, size_t n,
			  struct gp_amd_metrics *m, char *whybuf, size_t cap)
{
	memset(m, 0, sizeof *m);
	if (cap)
		whybuf[0] = '\0';
	if (n < 4) {
		snprintf(whybuf, cap, "gpu_metrics: %zu bytes, no header", n);
		return false;
	}
	unsigned size = le16(buf);
	m->format_revision = buf[2];
	m->content_revision = buf[3];
	size_t gfx, end;
	if (m->format_revision == 1 && m->content_revision == 0)
		gfx = 28;
	else if (m->format_revision == 1 && m->content_revision <= 3)
		gfx = 16;
	else {
		snprintf(whybuf, cap, "gpu_metrics v%u.%u: a layout this gpuprobe does not read (1.0-1.3)",
			 m->format_revision, m->content_revision);
		return false;
	}
	end = gfx + 8;	/* gfx, umc, mm, socket power: four u16 */
	if (size < end || size > n) {
		snprintf(whybuf, cap, "gpu_metrics v%u.%u: structure_size %u, %zu bytes read (the fields end at %zu)",
			 m->format_revision, m->content_revision, size, n, end);
		return false;
	}
	unsigned gv = le16(buf + gfx), uv = le16(buf + gfx + 2), pv = le16(buf + gfx + 6);
	m->have_gfx = gv != AMD_METRICS_NA;
	m->gfx_pct = m->have_gfx ? gv : 0;
	m->have_umc = uv != AMD_METRICS_NA;
	m->umc_pct = m->have_umc ? uv : 0;
	m->have_power = pv != AMD_METRICS_NA;
	m->power_w = m->have_power ? pv : 0;
	if (!m->have_gfx && !m->have_umc && !m->have_power) {
		snprintf(whybuf, cap, "gpu_metrics v%u.%u: activity and socket power not available (0xFFFF)",
			 m->format_revision, m->content_revision);
		return false;
	}
	return true;
}

struct card_slot {
	char dir[320];
	bool busy_ok;
	struct gp_amd_card card;
};

struct gp_amd_cards {
	const struct gp_root *root;
	bool ticked;
	struct card_slot slot[16];
	size_t n;
};

struct gp_amd_cards *gp_amd_cards_new(const struct gp_root *root)
{
	struct gp_amd_cards *c = calloc(1, sizeof *c);

	if (c)
		c->root = root;
	return c;
}

void gp_amd_cards_free(struct gp_amd_cards *c)
{
	free(c);
}

void gp_amd_cards_tick(struct gp_amd_cards *c)
{
	c->ticked = true;
	c->n = 0;
}

static void card_read(const struct gp_root *root, struct card_slot *s)
{
	char path[400], buf[32];
	unsigned char mb[4096];
	uint64_t v;

	memset(&s->card, 0, sizeof s->card);
	snprintf(path, sizeof path, "%s/gpu_busy_percent", s->dir);
	s->busy_ok = gp_read_file(root, path, buf, sizeof buf) > 0 &&
		     sscanf(buf, "%" SCNu64, &v) == 1 && v <= 100;
	if (!s->busy_ok)
		return;
	s->card.busy_pct = (unsigned)v;
	snprintf(path, sizeof path, "%s/gpu_metrics", s->dir);
	ssize_t n = gp_read_file(root, path, (char *)mb, sizeof mb);
	/* A long path's why is cut, not the path read. */
	if (n < 0 && snprintf(s->card.why, sizeof s->card.why, "no %s", path) < 0)
		s->card.why[0] = '\0';
	else if (n >= 0)
		s->card.metrics_ok = gp_amd_metrics_parse(mb, (size_t)n, &s->card.m,
							  s->card.why, sizeof s->card.why);
}

const struct gp_amd_card *gp_amd_card_read(struct gp_amd_cards *c, const char *dir)
{
	struct card_slot *s;

	for (size_t i = 0; c->ticked && i < c->n; i++)
		if (!strcmp(c->slot[i].dir, dir))
			return c->slot[i].busy_ok ? &c->slot[i].card : NULL;
	/* Not ticked, or more cards than slots: read into the scratch slot
	 * (the last), uncached. */
	if (c->ticked && c->n < sizeof c->slot / sizeof c->slot[0] - 1)
		s = &c->slot[c->n++];
	else
		s = &c->slot[sizeof c->slot / sizeof c->slot[0] - 1];
	snprintf(s->dir, sizeof s->dir, "%s", dir);
	card_read(c->root, s);
	return s->busy_ok ? &s->card : NULL;
}
