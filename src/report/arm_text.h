/* Renders pinning arms (the `arm` lines of a result) as the two tables
 * seed 004's engineers pasted into their report: arm, call, range,
 * prefault, lock, result; then what each pin did to the system. */
#ifndef GP_ARM_TEXT_H
#define GP_ARM_TEXT_H
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
void gp_arm_table(FILE *out, json_t *const *arms, size_t n, bool markdown);
/* "16.4 GiB (17 559 175 168 B)" */
void gp_size_text(unsigned long long bytes, char *buf, size_t cap);
#endif
