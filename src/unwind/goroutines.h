/* Goroutines of a live Go process, read from outside (issue 32).
 *
 * A Go program's OS threads are the runtime's: the netpoller, sysmon, the
 * idle Ms parked on futexes.  Which of them happens to sleep where says
 * nothing about the program; its own units of work are goroutines.  As
 * debuggers do (Delve's proc/variables.go reads runtime.allgs), the
 * runtime's list of goroutines is read with process_vm_readv: each g's
 * status, wait reason (an index into runtime.waitReasonStrings), start
 * function and goroutine id, with the offsets of runtime.g's members
 * taken from the binary's DWARF (libdw; Go binaries carry it unless
 * linked with -ldflags='-s -w').  Where the symbols or the DWARF are
 * gone, the process is still known to be Go (its .go.buildinfo or
 * .note.go.buildid section) and the line says why its goroutines are out
 * of sight.
 *
 * The result, as stacks.c adds it to a `stacks` line:
 *   "goroutines": {"go":"go1.19.8", "module":PATH, "n":N (the program's,
 *                  the runtime's own left out), "system":K,
 *                  "groups":[{"start":"net/http.(*conn).serve",
 *                             "at":"main.main.func1" (the innermost frame of
 *                             the program's own code, else of the library
 *                             that called into the runtime),
 *                             "wait":"semacquire", "n":12}, ...],
 *                  "more":M (goroutines in groups beyond those listed)}
 *   or {"module":PATH, "error":"no DWARF (stripped: -ldflags=-s -w)"}. */
#ifndef GP_GOROUTINES_H
#define GP_GOROUTINES_H

#include <elfutils/libdwfl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define GP_GO_NAME 96
#define GP_GO_WAIT 40

struct gp_go;

struct gp_go *gp_go_open(int pid);
void gp_go_close(struct gp_go *go);

/* After each module refresh: finds the Go runtime the first time, or
 * again when the module it was found in is gone. */
void gp_go_refresh(struct gp_go *go, Dwfl *dwfl);

/* The line's "goroutines" object, or NULL when the process is not Go.
 * Reads the target's memory now (no thread is stopped: a goroutine that
 * waits holds its g still; one that runs may be read half-changed, and
 * every field is checked as any other read from the target). */
json_t *gp_go_read_json(struct gp_go *go);

/* One goroutine as read: the pieces the groups are made of (pure, for
 * tests). */
struct gp_goraw {
	char start[GP_GO_NAME];   /* its start function */
	char at[GP_GO_NAME];      /* gp_go_pick_at's frame, "" none */
	char wait[GP_GO_WAIT];    /* wait reason, or "running", "runnable", "syscall" */
};

/* The runtime's own goroutines (runtime/traceback.go isSystemGoroutine:
 * a start function in package runtime, runtime.main excepted). */
bool gp_go_is_system(const char *start);

/* Of a goroutine's frames, innermost first, the one that names where it
 * waits: the first of the program's own packages (main, or a path whose
 * first element has a dot: github.com/...), else the first outside the
 * runtime's plumbing (runtime, sync, internal/...); NULL when none. */
const char *gp_go_pick_at(const char *const *frames, size_t n);

/* A goroutine in "semacquire" (Go before 1.20 gave one reason for every
 * sync wait): the sync call its frames show, named as later Go versions
 * name it ("sync.Mutex.Lock", "sync.RWMutex.RLock",
 * "sync.WaitGroup.Wait"); NULL when none. */
const char *gp_go_sync_wait(const char *const *frames, size_t n);

/* The groups of n goroutines (same start, at and wait), largest first, at
 * most max of them; what is left is *more.  A JSON array. */
json_t *gp_go_groups_json(const struct gp_goraw *g, size_t n, size_t max, size_t *more);

#endif
