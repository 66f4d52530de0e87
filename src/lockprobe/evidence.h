/* What lockprobe's numbers are evidence of (issue 13): a pre-fault rate
 * is a storage read rate only when pages had to be read, and VmPin/VmLck
 * at 0 after a successful pin is no evidence when the driver does not
 * account its pins there. */
#ifndef GP_EVIDENCE_H
#define GP_EVIDENCE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The process's storage reads and major faults at one moment. */
struct gp_io_mark {
	uint64_t read_bytes;	/* /proc/self/io read_bytes: fetched from storage */
	bool have_io;
	long majflt;		/* getrusage(RUSAGE_SELF).ru_majflt */
};
void gp_io_mark_now(struct gp_io_mark *m);

/* Adds to an arm, after a pre-fault of bytes in secs:
 *   "prefault_kind": "mapping" (every page was cached: prefault_mib_s is
 *                    the rate of filling page tables, not of reading),
 *                    "read" (pages came from storage), "allocation"
 *                    (anonymous memory)
 *   "prefault_read_mib", "prefault_read_mib_s" (with "read"),
 *   "prefault_major_faults"
 * and a note that says which rate it is. */
void gp_prefault_evidence(json_t *arm, const struct gp_io_mark *before,
			  const struct gp_io_mark *after, double secs,
			  uint64_t bytes, bool anon);

/* After a pin call that succeeded (ok) while /proc/self/status read
 * VmPin and VmLck (bytes; have false when unread): when both are 0,
 * replaces "vm_pin_mib"/"vm_lck_mib" with null, sets
 * "vm_pin_accounted": false and says why in the note (the driver pins
 * without accounting them there), so 0 is not shown as evidence. */
void gp_pin_accounting(json_t *arm, const char *runtime, bool ok, bool have,
		       uint64_t vm_pin, uint64_t vm_lck);

/* Appends text to the arm's "note" ("A; B"). */
void gp_arm_add_note(json_t *arm, const char *text);

#endif
