/* dlopen for paths the user names (--lib): never blocks, never maps a
 * device.  The dynamic linker open(2)s the path as given, so a FIFO
 * hangs it forever and a character device is read from; only regular
 * files reach dlopen.  Names without a '/' go to the search path as
 * they are. */
#ifndef GP_DL_H
#define GP_DL_H

void *gp_dlopen(const char *lib, int flags);
/* The reason of the last failed gp_dlopen (this thread): gp_dlopen's
 * own, else dlerror()'s. */
const char *gp_dlerror(void);

#endif
