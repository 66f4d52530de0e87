/* Parsers for /proc/PID/stat, /proc/PID/task/TID/{stat,status,syscall,wchan}.
 * Pure functions over a NUL-terminated buffer; see proc(5). */
#ifndef GP_PROCSTAT_H
#define GP_PROCSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The fields of stat that gpuprobe uses (proc(5) numbering). */
struct gp_stat {
	int pid;            /* (1) */
	char comm[64];      /* (2) without the parentheses */
	char state;         /* (3) */
	int ppid;           /* (4) */
	uint64_t minflt;    /* (10) */
	uint64_t majflt;    /* (12) */
	uint64_t utime;     /* (14) clock ticks */
	uint64_t stime;     /* (15) clock ticks */
	int64_t cutime;     /* (16) clock ticks of reaped children */
	int64_t cstime;     /* (17) */
	int64_t num_threads;/* (20) */
	uint64_t starttime; /* (22) clock ticks after boot */
	int64_t rss_pages;  /* (24) */
	int processor;      /* (39), -1 when absent (old kernels) */
};

/* comm may hold spaces and parentheses ("w2 (x) )"): the name runs from
 * the first '(' to the LAST ')' of the line.  Returns false on a line
 * too short to hold fields 1-22. */
bool gp_parse_stat(const char *buf, struct gp_stat *st);

enum gp_syscall_kind {
	GP_SC_UNKNOWN = 0, /* not readable (permission) or not read */
	GP_SC_RUNNING,     /* "running": on a CPU, no syscall to report */
	GP_SC_USER,        /* "-1 sp pc": blocked, but not inside a syscall */
	GP_SC_IN,          /* "nr a1..a6 sp pc": inside syscall nr */
};

struct gp_syscall {
	enum gp_syscall_kind kind;
	int64_t nr;
	uint64_t args[6];
	uint64_t sp, pc;
};

/* /proc/TID/syscall. False on a malformed line. */
bool gp_parse_syscall(const char *buf, struct gp_syscall *sc);

/* A thread now in restart_syscall that was, at its reading before, in a
 * call from the same user sp and pc: it continues that call, and *now
 * says so (its number and arguments from before; true).  A sleep with a
 * timeout interrupted by a stop -- ours, when a stack was taken, or any
 * tracer's or SIGSTOP's -- or by a signal handler resumes through
 * restart_syscall (-ERESTART_RESTARTBLOCK: the kernel rewinds the user
 * pc to the syscall instruction and enters sys_restart_syscall, which
 * runs the call's restart_block: kernel/signal.c, arch/x86/kernel/
 * signal.c handle_signal/arch_do_signal_or_restart).  /proc then shows
 * restart_syscall with the registers' meaningless arguments, and what
 * the thread waits for was lost: a JVM's timed waits read as unknown
 * after our first stack snapshot (tests/e2e/trace-jvm-threads.sh on the
 * /proc path).  Same sp and pc: the restart re-enters from the very
 * instruction of the call it continues. */
bool gp_syscall_continued(const struct gp_syscall *before, struct gp_syscall *now);

/* voluntary_ctxt_switches / nonvoluntary_ctxt_switches from status. */
bool gp_parse_status_ctxt(const char *buf, uint64_t *vol, uint64_t *invol);

/* Process memory from /proc/PID/status, in bytes.  A field the kernel
 * lacks stays 0 and its bit in `have` stays clear. */
struct gp_status_mem {
	uint64_t rss_anon, rss_file, rss_shmem, vm_lck, vm_pin, vm_rss,
		vm_size, vm_hwm;
	int64_t threads;
	unsigned have; /* GP_HAVE_* bits */
	unsigned uid;  /* real uid */
};
enum {
	GP_HAVE_RSS_ANON = 1u << 0,
	GP_HAVE_RSS_FILE = 1u << 1,
	GP_HAVE_RSS_SHMEM = 1u << 2,
	GP_HAVE_VM_LCK = 1u << 3,
	GP_HAVE_VM_PIN = 1u << 4,
	GP_HAVE_VM_RSS = 1u << 5,
	GP_HAVE_THREADS = 1u << 6,
	GP_HAVE_VM_SIZE = 1u << 7,
	GP_HAVE_VM_HWM = 1u << 8,
};
bool gp_parse_status_mem(const char *buf, struct gp_status_mem *m);

/* The byte-valued lines of status, one table for the parser and the
 * sampler's writer: the kernel's key, the result's (doc/result-format.md),
 * where the value lives in struct gp_status_mem and its `have` bit. */
struct gp_status_mem_field {
	const char *status_key, *json_key;
	size_t off;
	unsigned bit;
};
enum { GP_STATUS_MEM_NFIELDS = 8 };
extern const struct gp_status_mem_field gp_status_mem_fields[GP_STATUS_MEM_NFIELDS];
/* The value of field f of m (0 where the kernel lacks it). */
uint64_t gp_status_mem_value(const struct gp_status_mem *m, const struct gp_status_mem_field *f);

/* /proc/PID/io.  False when no field was found. */
struct gp_io {
	uint64_t rchar, wchar, syscr, syscw, read_bytes, write_bytes,
		cancelled_write_bytes;
};
bool gp_parse_io(const char *buf, struct gp_io *io);

/* /proc/TID/schedstat: "run_ns wait_ns timeslices". */
bool gp_parse_schedstat(const char *buf, uint64_t *run_ns, uint64_t *wait_ns,
			uint64_t *pcount);

/* wchan: the symbol, or "" for "0" (running or not waiting). */
void gp_parse_wchan(const char *buf, char *out, unsigned cap);

#endif
