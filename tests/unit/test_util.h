/* Shared helpers for the cmocka unit tests. */
#ifndef NETRIG_TEST_UTIL_H
#define NETRIG_TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

/* cmocka 1.1.5 compares floats only as float: this keeps double precision and prints both. */
#define assert_dbl_near(actual, expected, eps)                                                     \
    do {                                                                                           \
        double dbl_act__ = (actual), dbl_exp__ = (expected);                                       \
        if (!(fabs(dbl_act__ - dbl_exp__) <= (eps)))                                               \
            fail_msg("%s = %.17g, expected %.17g (+/- %g)", #actual, dbl_act__, dbl_exp__,         \
                     (double)(eps));                                                               \
    } while (0)

/* haystack must contain needle; prints both on failure. */
#define assert_contains(haystack, needle)                                                          \
    do {                                                                                           \
        const char *hay__ = (haystack), *ndl__ = (needle);                                         \
        if (!hay__ || !strstr(hay__, ndl__))                                                       \
            fail_msg("%s = \"%s\" does not contain \"%s\"", #haystack, hay__ ? hay__ : "(null)",   \
                     ndl__);                                                                       \
    } while (0)

#endif
