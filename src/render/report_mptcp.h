/* report_mptcp: the text report's MPTCP section: each flow's subflows, which path carried
 * what (the sender's counts, the receiver's beside them). */
#ifndef NETRIG_REPORT_MPTCP_H
#define NETRIG_REPORT_MPTCP_H

#include <stdio.h>

#include "result.h"

/* Nothing unless the run was --mptcp. */
void report_mptcp_text(FILE *out, const struct run_result *r);

#endif
