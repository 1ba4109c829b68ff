/*
 * Reads members of a flat JSON object in place, with no allocation: the check and status answers
 * of the device API are small objects whose values the client copies into fixed buffers.
 */
#ifndef OTA_JSON_SCAN_H
#define OTA_JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { JSON_ABSENT, JSON_STRING, JSON_NUMBER, JSON_TRUE, JSON_FALSE, JSON_NULL, JSON_NESTED } json_kind_t;

/* A member's value as it stands in the text: for a string, what is between the quotes, escapes included. */
typedef struct {
    json_kind_t kind;
    const char *start;
    size_t len;
} json_value_t;

/* Finds `key` among the top-level members of the object in `text`. False when the text is not an object. */
bool json_find(const char *text, const char *key, json_value_t *out);

/* The member as a string, unescaped into out (NUL-terminated). False when absent, not a string, or too long. */
bool json_get_string(const char *text, const char *key, char *out, size_t cap);

/* The member as an integer. False when absent, not an integer, or out of range. */
bool json_get_int(const char *text, const char *key, int64_t *out);

/* The member as a boolean. False when absent or not true/false. */
bool json_get_bool(const char *text, const char *key, bool *out);

/* Appends `value` to out as a JSON string, quotes included. False when it does not fit. */
bool json_put_string(char *out, size_t cap, size_t *len, const char *value);

#endif
