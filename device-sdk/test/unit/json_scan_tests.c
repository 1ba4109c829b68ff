/* The JSON reader of the check and status answers. */
#include <string.h>

#include "json_scan.h"
#include "test_support.h"

void json_scan_tests(void);

void json_scan_tests(void) {
    const char *offer = " {\"update_available\": true, \"nested\": {\"url\": \"x\", \"a\": [1, {\"b\": \"}\"}]},"
                        " \"url\": \"http://h/d?a=1&b=\\\"2\\\"\\u0041\", \"size\": 1048576, \"neg\": -5, \"n\": null, \"f\": false}";
    json_value_t value;
    char text[64];
    int64_t number = 0;
    bool flag = false;
    EXPECT("a top-level string, unescaped", json_get_string(offer, "url", text, sizeof text) && !strcmp(text, "http://h/d?a=1&b=\"2\"A"));
    EXPECT("a key inside a nested object is not top-level", json_find(offer, "a", &value) && value.kind == JSON_ABSENT);
    EXPECT("a nested value is skipped whole", json_find(offer, "nested", &value) && value.kind == JSON_NESTED);
    EXPECT("an integer", json_get_int(offer, "size", &number) && number == 1048576);
    EXPECT("a negative integer", json_get_int(offer, "neg", &number) && number == -5);
    EXPECT("true", json_get_bool(offer, "update_available", &flag) && flag);
    EXPECT("false", json_get_bool(offer, "f", &flag) && !flag);
    EXPECT("null is not a string", !json_get_string(offer, "n", text, sizeof text));
    EXPECT("a string that does not fit is refused", !json_get_string(offer, "url", text, 5));
    EXPECT("an absent key", !json_get_int(offer, "missing", &number));
    EXPECT("not an object", !json_find("[1,2]", "a", &value));
    EXPECT("an unterminated string", !json_find("{\"a\": \"b", "a", &value));
    EXPECT("an unterminated object", !json_find("{\"a\": {\"b\": 1", "a", &value));
    EXPECT("an integer too large", !json_get_int("{\"a\": 99999999999999999999}", "a", &number));
    EXPECT("a fraction is not an integer", !json_get_int("{\"a\": 1.5}", "a", &number));
    EXPECT("a \\u escape outside ASCII is refused", !json_get_string("{\"a\": \"\\u00e9\"}", "a", text, sizeof text));

    /* Deep nesting is skipped without recursion. */
    static char deep[20000];
    size_t n = 0;
    deep[n++] = '{';
    memcpy(deep + n, "\"d\":", 4);
    n += 4;
    for (int i = 0; i < 5000; i++) deep[n++] = '[';
    for (int i = 0; i < 5000; i++) deep[n++] = ']';
    memcpy(deep + n, ",\"z\":1}", 8);
    EXPECT("5,000 levels of nesting are skipped", json_get_int(deep, "z", &number) && number == 1);

    char out[64];
    size_t len = 0;
    EXPECT("a string is escaped", json_put_string(out, sizeof out, &len, "a\"b\\c\n") && !strcmp(out, "\"a\\\"b\\\\c\\u000a\""));
    len = 0;
    EXPECT("a string that does not fit is refused", !json_put_string(out, 6, &len, "abcdef"));
}
