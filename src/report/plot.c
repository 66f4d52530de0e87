/* placeholder, replaced below */
#include "config.h"
#include "render.h"
int gp_plot(const char *path, const struct gp_doc *d, char *err, size_t errcap)
{
	(void)path; (void)d;
	snprintf(err, errcap, "this gpuprobe was built without cairo: no plots");
	return -1;
}
