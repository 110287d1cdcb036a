/* libFuzzer target: the parsers of kernel text (/proc/stat, thread stat lines, CPU lists) and
 * of user-given address lists. Hostile or garbage content must give an error, never a crash. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"
#include "cpu.h"
#include "cpulist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    struct cpu_sys_snap snap;
    struct cpu_thread_snap th = {0};
    struct cpulist cl;
    struct acl_entry e;

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    cpu_parse_stat(text, &snap);
    cpu_parse_thread_stat(text, 100, &th);
    cpu_parse_thread_last_cpu(text);
    cpulist_parse(text, &cl);
    acl_parse(text, &e);
    free(text);
    return 0;
}
