/* gpuprobe watch: a node's sidecar (issue 22).  It follows processes
 * (given PIDs, --name, every GPU holder with --gpu: follow.h), samples
 * each one with its descendants as trace does, on the loop trace
 * drives too (loop/ticker.h, loop/sampling.h): the tree is judged as one
 * (issue 28: a parent waiting on a deadlocked worker is hang-blocked, the
 * worker named), and a descendant is not followed on its own; keeps its own record of the last
 * stretch (spool.h), and judges each process every tick with the
 * verdict (verdict.h).  Stacks only of hot threads (at most once every
 * 10 s a tree) and, once a flat stretch reaches --hang-after, of
 * every thread of every process of the tree: the stacks the verdict
 * names the wait from.  When a verdict turns to a hang class: one log line and, with
 * --bundle-dir, one bundle (bundle.h) made in a child, once per flat
 * stretch, at most one every --bundle-every seconds, none while the
 * directory's bundles hold --bundle-max bytes.  --metrics FILE: the
 * Prometheus text file of metrics.h, every tick. */
#ifndef GP_WATCH_H
#define GP_WATCH_H

#define GP_WATCH_HOT_EVERY 10.0      /* seconds between two hot-thread stacks of a process */
#define GP_WATCH_BUNDLE_SECONDS 1.0  /* the bundle's own trace, from watch */
#define GP_WATCH_BUNDLE_EVERY 60.0
#define GP_WATCH_BUNDLE_MAX (1ull << 30)

#endif
