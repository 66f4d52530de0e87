#include "config.h"
#include "evidence.h"
#include "parse.h"
#include "procfs.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

void gp_io_mark_now(struct gp_io_mark *m)
{
	struct gp_root root;
	char buf[1024];
	struct rusage ru;

	memset(m, 0, sizeof *m);
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		m->majflt = ru.ru_majflt;
	if (gp_root_open(&root, "/") != 0)
		return;
	/* read_bytes: "bytes which this process really did cause to be
	 * fetched from the storage layer" (Documentation/filesystems/
	 * proc.rst): a page-cache hit costs none.  Needs
	 * CONFIG_TASK_IO_ACCOUNTING. */
	if (gp_read_file(&root, "/proc/self/io", buf, sizeof buf) > 0) {
		const char *p = strstr(buf, "\nread_bytes:");
		if (p && gp_parse_u64(p + strlen("\nread_bytes:"), &m->read_bytes, NULL))
			m->have_io = true;
	}
	gp_root_close(&root);
}

void gp_arm_add_note(json_t *arm, const char *text)
{
	const char *old = json_string_value(json_object_get(arm, "note"));

	if (old && *old)
		json_object_set_new(arm, "note", json_sprintf("%s; %s", old, text));
	else
		json_object_set_new(arm, "note", json_string(text));
}

void gp_prefault_evidence(json_t *arm, const struct gp_io_mark *before,
			  const struct gp_io_mark *after, double secs,
			  uint64_t bytes, bool anon)
{
	long majflt = after->majflt >= before->majflt ? after->majflt - before->majflt : 0;
	double mib = (double)bytes / 1048576.0;
	char note[256];

	json_object_set_new(arm, "prefault_major_faults", json_integer(majflt));
	if (anon) {
		json_object_set_new(arm, "prefault_kind", json_string("allocation"));
		return;
	}
	bool io = before->have_io && after->have_io;
	uint64_t rb = io && after->read_bytes >= before->read_bytes
		? after->read_bytes - before->read_bytes : 0;
	/* Without /proc/self/io, a major fault is the only sign of a read. */
	if ((io && rb == 0) || (!io && majflt == 0)) {
		json_object_set_new(arm, "prefault_kind", json_string("mapping"));
		snprintf(note, sizeof note, "pre-fault: every page was already in the page "
			 "cache (no storage read, %ld major faults): %.0f MiB/s is the rate of "
			 "mapping cached pages, not a read rate", majflt, secs > 0 ? mib / secs : 0);
		gp_arm_add_note(arm, note);
		return;
	}
	json_object_set_new(arm, "prefault_kind", json_string("read"));
	if (!io) {
		snprintf(note, sizeof note, "pre-fault: %ld major faults (pages read from "
			 "storage); no /proc/self/io, so no read rate", majflt);
		gp_arm_add_note(arm, note);
		return;
	}
	double rmib = (double)rb / 1048576.0;
	json_object_set_new(arm, "prefault_read_mib", json_real(rmib));
	if (secs > 0)
		json_object_set_new(arm, "prefault_read_mib_s", json_real(rmib / secs));
	snprintf(note, sizeof note, "pre-fault read %.0f of %.0f MiB from storage: "
		 "%.0f MiB/s read rate (%ld major faults)", rmib, mib,
		 secs > 0 ? rmib / secs : 0, majflt);
	gp_arm_add_note(arm, note);
}

void gp_pin_accounting(json_t *arm, const char *runtime, bool ok, bool have,
		       uint64_t vm_pin, uint64_t vm_lck)
{
	if (!ok || !have || vm_pin || vm_lck)
		return;
	json_object_set_new(arm, "vm_pin_mib", json_null());
	json_object_set_new(arm, "vm_lck_mib", json_null());
	json_object_set_new(arm, "vm_pin_accounted", json_false());
	if (runtime && !strcmp(runtime, "cuda"))
		gp_arm_add_note(arm, "VmPin/VmLck read 0 with the pin in place: the NVIDIA "
				"driver does not account its pins there (measured on the H200: 0 "
				"while 16 GiB was registered), so 0 is no evidence of no pin");
	else
		gp_arm_add_note(arm, "VmPin/VmLck read 0 with the pin in place: this driver "
				"does not account it there (amdgpu/KFD map user memory through "
				"HMM, not a long-term pin), so 0 is no evidence of no pin");
}
