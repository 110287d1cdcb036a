/* wrap: prose for the terminal wrapped at word boundaries; the one wrapper every command's
 * sentences go through (diagnose's evidence and advice, the audit's reasons, tune's plan and
 * progress lines, load's advice). */
#ifndef NETRIG_WRAP_H
#define NETRIG_WRAP_H

#include <stdio.h>

/* The columns a wrapped line may fill. */
#define WRAP_WIDTH 80

/* Prints lead (NULL: indent spaces), then text's words (split at spaces; a run of spaces counts
 * as one) so that no line passes WRAP_WIDTH columns; every further line starts with indent
 * spaces. A word longer than a line stands alone on its line, unbroken, so commands and paths
 * copy whole. Ends with a newline. */
void wrap_print(FILE *out, const char *lead, int indent, const char *text);

#endif
