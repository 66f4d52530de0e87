/* Files gpuprobe leaves for others to read (a bundle, watch's metrics),
 * made so that nobody else can choose what they are (issue 27: as root,
 * a bundle landed in a FILE.tmp that `nobody` had made beforehand, owned
 * by nobody, mode 0666: open(O_CREAT | O_TRUNC) took the file that was
 * there).
 *
 * - The directory: owned by the caller or root, and writable by nobody
 *   else -- group write only for the caller's own group or root's --
 *   unless it is sticky (/tmp: others may add names there, but not
 *   remove or rename the caller's).  Anything else is refused before a
 *   byte is written: its other writers could swap what gpuprobe writes
 *   for their own, or make the name point where they like.
 * - The file: created with O_EXCL | O_NOFOLLOW, so it is a new file of
 *   the caller's, of the mode asked, never one that was there.  A stale
 *   one of the caller's own (a run killed before its rename) is removed
 *   first; one of anybody else's is refused. */
#ifndef GP_SAFEFILE_H
#define GP_SAFEFILE_H

#include <stddef.h>
#include <sys/types.h>

/* 0 when dir may be written (above); -1 with errno (EPERM when refused,
 * else stat's) and why (cap bytes) saying what is wrong with it, e.g.
 * "writable by others (mode 0777) and not sticky". */
int gp_safe_dir(const char *dir, char *why, size_t cap);
/* gp_safe_dir of the directory path is in ("." for a bare name). */
int gp_safe_dir_of(const char *path, char *why, size_t cap);
/* A new file at path, O_WRONLY | O_CLOEXEC, of mode: its fd, or -1 with
 * errno (EEXIST: path is there and not a stale file of the caller's). */
int gp_create_excl(const char *path, mode_t mode);

#endif
