/* report_load: 'netrig load' for people: the phases (probe latency percentiles and loss,
 * throughput each way), the latency increase under load with its verdict band, the congestion
 * control the load ran, the advice and the warnings. The JSON form is model/load_json.c. */
#ifndef NETRIG_REPORT_LOAD_H
#define NETRIG_REPORT_LOAD_H

#include <stdio.h>

#include "load_result.h"

void report_load_text(FILE *out, const struct load_result *lr);

#endif
