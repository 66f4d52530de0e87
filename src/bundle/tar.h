/* A .tar.gz written by hand: POSIX ustar headers (POSIX.1-2017, pax,
 * "ustar Interchange Format") over zlib's gzip stream.
 *
 * Why not libarchive: Debian 12 ships it (libarchive-dev), but a bundle
 * holds a dozen small regular files with short names, which is the
 * simplest corner of ustar: a 512-byte header of octal fields, the data
 * padded to 512, two zero blocks at the end.  zlib is already on every
 * machine gpuprobe builds on (elfutils links it), so the whole writer is
 * one small file and one library that is there anyway.
 *
 * The archive is written to PATH.tmp and renamed to PATH when complete:
 * a reader (a fleet's uploader, watch's disk cap) never sees half a
 * bundle. */
#ifndef GP_TAR_H
#define GP_TAR_H

#include <stddef.h>

struct gp_tar;

/* Opens PATH.tmp for writing.  NULL with errno. */
struct gp_tar *gp_tar_open(const char *path);
/* Adds the regular file src as name (at most 99 bytes, "DIR/FILE").
 * 0, or -1 with errno (the error is sticky). */
int gp_tar_add_file(struct gp_tar *t, const char *name, const char *src);
/* Adds len bytes from memory as name. */
int gp_tar_add_mem(struct gp_tar *t, const char *name, const void *data, size_t len);
/* Writes the end blocks, closes and renames PATH.tmp to PATH; on any
 * earlier error removes PATH.tmp instead.  0, or -1 with errno. */
int gp_tar_close(struct gp_tar *t);
/* Closes and removes PATH.tmp: no archive. */
void gp_tar_abandon(struct gp_tar *t);

#endif
