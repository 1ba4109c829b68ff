#include "test_support.h"

int test_passed, test_failed;

int test_summary(void) {
    printf("%d passed, %d failed\n", test_passed, test_failed);
    return test_failed == 0 ? 0 : 1;
}
