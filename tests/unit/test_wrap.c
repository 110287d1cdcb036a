/* The one text wrapper (core/wrap): line widths, the lead and the indent, long words kept
 * whole, runs of spaces, and every word printed once in order. */
#define _GNU_SOURCE
#include "test_util.h"

#include "wrap.h"

#include <stdio.h>
#include <stdlib.h>

/* What wrap_print writes, in a malloc'd string. */
static char *wrapped(const char *lead, int indent, const char *text)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    wrap_print(f, lead, indent, text);
    fclose(f);
    return buf;
}

/* Each line of s no wider than WRAP_WIDTH unless it is one word after the indent; every line
 * but the first starts with exactly indent spaces and then a word. */
static void check_lines(const char *s, int indent)
{
    int n = 0;

    for (const char *p = s; *p; n++) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        const char *body = p + (n ? indent : 0);

        assert_non_null(nl); /* ends with a newline */
        if (n) {
            for (int i = 0; i < indent; i++)
                assert_int_equal(p[i], ' ');
            assert_true(body[0] != ' ');
        }
        if (len > WRAP_WIDTH && n)
            assert_null(memchr(body, ' ', len - (size_t)indent)); /* one long word alone */
        p = nl + 1;
    }
}

/* The words of out after the lead, joined by one space, equal text's. */
static void check_words(const char *out, size_t leadlen, const char *text)
{
    char *a = strdup(out + leadlen), *b = strdup(text), *x, *y, *sa, *sb;

    for (x = strtok_r(a, " \n", &sa), y = strtok_r(b, " ", &sb); x || y;
         x = strtok_r(NULL, " \n", &sa), y = strtok_r(NULL, " ", &sb)) {
        assert_non_null(x);
        assert_non_null(y);
        assert_string_equal(x, y);
    }
    free(a);
    free(b);
}

static void test_fits(void **state)
{
    char *s = wrapped("Advice: ", 2, "raise the buffer");

    (void)state;
    assert_string_equal(s, "Advice: raise the buffer\n");
    free(s);
    s = wrapped(NULL, 4, "indented");
    assert_string_equal(s, "    indented\n");
    free(s);
    s = wrapped("lead only: ", 2, "");
    assert_string_equal(s, "lead only: \n");
    free(s);
}

static void test_wraps_at_width(void **state)
{
    const char *text = "by the kernel's accounting (6.6+: the kernel's payload/truesize ratio, 1/2 "
                       "until it measures, up to 0.93) a buffer of 1.19 MiB gives a window of "
                       "610.4 KiB-1.11 MiB, which caps one flow at 123.5-229.7 Mbit/s at srtt "
                       "40.5 ms";
    char *s = wrapped("  - ", 4, text);
    size_t first = strcspn(s, "\n");

    (void)state;
    check_lines(s, 4);
    check_words(s, 4, text);
    /* the first line is full: its next word would not have fitted */
    assert_true(first <= WRAP_WIDTH);
    assert_true(first + 1 + strcspn(s + first + 5, " \n") > WRAP_WIDTH);
    assert_true(strncmp(s, "  - by the kernel's", 19) == 0);
    free(s);
}

static void test_exact_width(void **state)
{
    char text[128];
    char *s;

    (void)state;
    /* 8 words of 9 letters and their 7 spaces: 79 columns, then one more of 1 column */
    snprintf(text, sizeof(text), "%s",
             "aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee "
             "fffffffff ggggggggg hhhhhhhhh x y");
    s = wrapped(NULL, 0, text);
    /* 79 + " x" = 81 > 80: x goes to the next line */
    assert_string_equal(s, "aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffff ggggggggg "
                           "hhhhhhhhh\nx y\n");
    free(s);
    /* with a lead of one column the line is exactly 80 */
    s = wrapped(">", 0,
                "aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffff ggggggggg "
                "hhhhhhhhh");
    assert_int_equal(strlen(s), 81);
    free(s);
}

static void test_long_word_whole(void **state)
{
    char word[200], text[256];
    char *s;

    (void)state;
    memset(word, 'w', 120);
    word[120] = '\0';
    snprintf(text, sizeof(text), "run %s then", word);
    s = wrapped("Fix: ", 2, text);
    check_lines(s, 2);
    check_words(s, 5, text);
    assert_non_null(strstr(s, word)); /* never cut */
    assert_true(strncmp(s, "Fix: run\n  w", 12) == 0);
    free(s);
}

static void test_spaces(void **state)
{
    char *s = wrapped("x: ", 2, "  two   spaces  ");

    (void)state;
    assert_string_equal(s, "x: two spaces\n");
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fits),        cmocka_unit_test(test_wraps_at_width),
        cmocka_unit_test(test_exact_width), cmocka_unit_test(test_long_word_whole),
        cmocka_unit_test(test_spaces),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
