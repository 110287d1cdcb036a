/* multi_result: the result of one test against several servers. */
#include "multi_result.h"

void multi_result_fini(struct multi_result *m)
{
    for (uint32_t t = 0; t < m->n; t++)
        result_fini(&m->runs[t]);
}
