/* multi: one test against several servers at once (`-c A -c B`). Each target is prepared in
 * turn (control exchange, data paths), its clock offset is measured over the control
 * connection, then all start at one agreed instant and run side by side; the result holds
 * each target's run and the totals across them. */
#ifndef NETRIG_MULTI_H
#define NETRIG_MULTI_H

#include <signal.h>
#include <stdint.h>

#include "client.h"
#include "multi_result.h"

/* Parses "HOST", "HOST:PORT" or "[V6]:PORT" (default_port when none). */
int multi_parse_target(const char *s, uint16_t default_port, struct multi_target *t);

/* Runs the test of base against every target. Returns 0 when all completed, 1 when some
 * failed or were partial (see rc/err), <0 when none could run (err filled). */
int multi_run(const struct client_opts *base, struct multi_result *m, _Atomic int *stop, char *err,
              size_t errlen);

#endif
