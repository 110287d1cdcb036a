/* wrap: prose for the terminal wrapped at word boundaries. */
#include "wrap.h"

#include <stdbool.h>
#include <string.h>

void wrap_print(FILE *out, const char *lead, int indent, const char *text)
{
    size_t col, left = indent > 0 ? (size_t)indent : 0;
    bool first = true;

    if (lead) {
        fputs(lead, out);
        col = strlen(lead);
    } else {
        fprintf(out, "%*s", (int)left, "");
        col = left;
    }
    for (const char *p = text; *p;) {
        size_t word;

        while (*p == ' ')
            p++;
        if (!*p)
            break;
        word = strcspn(p, " ");
        if (!first && col + 1 + word > WRAP_WIDTH) {
            fprintf(out, "\n%*s", (int)left, "");
            col = left;
        } else if (!first) {
            fputc(' ', out);
            col++;
        }
        fprintf(out, "%.*s", (int)word, p);
        col += word;
        p += word;
        first = false;
    }
    fputc('\n', out);
}
