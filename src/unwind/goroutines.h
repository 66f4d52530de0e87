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
 * The result, as model/stackline.c writes it in a `stacks` line:
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

#include "stackline.h"

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>

struct gp_go;

struct gp_go *gp_go_open(int pid);
void gp_go_close(struct gp_go *go);

/* After each module refresh: finds the Go runtime the first time, or
 * again when the module it was found in is gone. */
void gp_go_refresh(struct gp_go *go, Dwfl *dwfl);

/* The line's "goroutines" (model/stackline.h writes them), false when
 * the process is not Go; what gi points to stays valid until the next
 * call.  Reads the target's memory now (no thread is stopped: a goroutine
 * that waits holds its g still; one that runs may be read half-changed,
 * and every field is checked as any other read from the target). */
bool gp_go_read(struct gp_go *go, struct gp_goinfo *gi);

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
 * most max of them into out; what is left is *more.  Their count (pure,
 * for tests). */
size_t gp_go_groups(const struct gp_goraw *g, size_t n, size_t max, struct gp_gogroup *out,
		    size_t *more);

#endif
