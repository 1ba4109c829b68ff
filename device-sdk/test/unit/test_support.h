/* The unit suite's one assertion: counts, names what failed, and closes with "N passed, M failed". */
#ifndef TEST_SUPPORT_H
#define TEST_SUPPORT_H

#include <stdio.h>

extern int test_passed, test_failed;

#define EXPECT(name, condition)                                                            \
    do {                                                                                   \
        if (condition) {                                                                   \
            test_passed++;                                                                 \
        } else {                                                                           \
            test_failed++;                                                                 \
            fprintf(stderr, "FAIL %s:%d %s: %s\n", __FILE__, __LINE__, (name), #condition); \
        }                                                                                  \
    } while (0)

int test_summary(void);

#endif
