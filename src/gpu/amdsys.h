/* The amdgpu cards' sysfs, device-wide: gpu_busy_percent and gpu_metrics
 * of each card (amdgpu_pm.c), read once a tick for every traced process
 * (gpu/house.h) under a gp_root, so recorded trees replay
 * (tests/fixtures/gpuact). */
#ifndef GP_AMDSYS_H
#define GP_AMDSYS_H

#include <stdbool.h>
#include <stddef.h>

#include "procfs.h"

#define GP_AMD_WHY 192

/* The fields of an amdgpu gpu_metrics blob the work judgement uses;
 * have_* false: the field reads 0xFFFF (not available). */
struct gp_amd_metrics {
	unsigned format_revision, content_revision;
	bool have_gfx, have_umc, have_power;
	unsigned gfx_pct, umc_pct, power_w;
};

/* Parses buf[0..n) (the bytes of /sys/class/drm/cardN/device/gpu_metrics).
 * true when it is a known layout (format 1, content 0..3) whose
 * structure_size covers the fields and no more than n; false with why. */
bool gp_amd_metrics_parse(const unsigned char *buf, size_t n,
			  struct gp_amd_metrics *m, char *why, size_t cap);

/* One card's reading of this tick. */
struct gp_amd_card {
	unsigned busy_pct;		/* gpu_busy_percent, 0-100 */
	bool metrics_ok;		/* gpu_metrics read and known */
	struct gp_amd_metrics m;
	char why[GP_AMD_WHY];		/* !metrics_ok: why */
};

struct gp_amd_cards;

struct gp_amd_cards *gp_amd_cards_new(const struct gp_root *root);
void gp_amd_cards_free(struct gp_amd_cards *c);
/* A new tick: every card is read again at its next ask.  Before the
 * first tick, every ask reads. */
void gp_amd_cards_tick(struct gp_amd_cards *c);

/* The card whose device directory is dir ("/sys/bus/pci/devices/<pdev>",
 * "/sys/class/drm/cardN/device"), read once a tick; NULL when its
 * gpu_busy_percent cannot be read (no amdgpu card there).  Valid until
 * the next tick or ask. */
const struct gp_amd_card *gp_amd_card_read(struct gp_amd_cards *c, const char *dir);

#endif
