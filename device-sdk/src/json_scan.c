#include "json_scan.h"

#include <string.h>

static const char *skip_space(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

/* Past the string that starts at the quote p; NULL when unterminated. */
static const char *skip_string(const char *p) {
    for (p++; *p; p++) {
        if (*p == '\\') {
            if (!p[1]) return NULL;
            p++;
        } else if (*p == '"') {
            return p + 1;
        }
    }
    return NULL;
}

/* Past the value that starts at p, filling `out`; NULL when malformed. Nested values are skipped
 * by counting brackets outside strings, without recursion, so that no nesting depth can overflow the stack. */
static const char *skip_value(const char *p, json_value_t *out) {
    out->start = p;
    if (*p == '"') {
        const char *end = skip_string(p);
        if (!end) return NULL;
        out->kind = JSON_STRING;
        out->start = p + 1;
        out->len = (size_t)(end - p - 2);
        return end;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        const char *q = p;
        do {
            if (*q == '"') {
                q = skip_string(q);
                if (!q) return NULL;
                continue;
            }
            if (*q == '{' || *q == '[') depth++;
            else if (*q == '}' || *q == ']') depth--;
            else if (!*q) return NULL;
            q++;
        } while (depth > 0);
        out->kind = JSON_NESTED;
        out->len = (size_t)(q - p);
        return q;
    }
    const char *q = p;
    while (*q && *q != ',' && *q != '}' && *q != ' ' && *q != '\n' && *q != '\r' && *q != '\t') q++;
    out->len = (size_t)(q - p);
    if (out->len == 0) return NULL;
    if (out->len == 4 && memcmp(p, "true", 4) == 0) out->kind = JSON_TRUE;
    else if (out->len == 5 && memcmp(p, "false", 5) == 0) out->kind = JSON_FALSE;
    else if (out->len == 4 && memcmp(p, "null", 4) == 0) out->kind = JSON_NULL;
    else out->kind = JSON_NUMBER;
    return q;
}

bool json_find(const char *text, const char *key, json_value_t *out) {
    out->kind = JSON_ABSENT;
    const char *p = skip_space(text);
    if (*p != '{') return false;
    p = skip_space(p + 1);
    if (*p == '}') return true;
    size_t key_len = strlen(key);
    for (;;) {
        if (*p != '"') return false;
        json_value_t name;
        p = skip_value(p, &name);
        if (!p) return false;
        p = skip_space(p);
        if (*p != ':') return false;
        p = skip_space(p + 1);
        json_value_t value;
        p = skip_value(p, &value);
        if (!p) return false;
        if (name.len == key_len && memcmp(name.start, key, key_len) == 0) {
            *out = value;
            return true;
        }
        p = skip_space(p);
        if (*p == '}') return true;
        if (*p != ',') return false;
        p = skip_space(p + 1);
    }
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool json_get_string(const char *text, const char *key, char *out, size_t cap) {
    json_value_t value;
    if (!json_find(text, key, &value) || value.kind != JSON_STRING || cap == 0) return false;
    size_t n = 0;
    for (size_t i = 0; i < value.len; i++) {
        char c = value.start[i];
        if (c == '\\') {
            char e = value.start[++i];
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': {
                /* The answers we read are ASCII; a \u escape outside it is refused rather than mangled. */
                if (i + 4 >= value.len) return false;
                int code = 0;
                for (int k = 1; k <= 4; k++) {
                    int d = hex_digit(value.start[i + k]);
                    if (d < 0) return false;
                    code = code * 16 + d;
                }
                if (code == 0 || code > 0x7f) return false;
                c = (char)code;
                i += 4;
                break;
            }
            default: c = e; break; /* \" \\ \/ */
            }
        }
        if (n + 1 >= cap) return false;
        out[n++] = c;
    }
    out[n] = '\0';
    return true;
}

bool json_get_int(const char *text, const char *key, int64_t *out) {
    json_value_t value;
    if (!json_find(text, key, &value) || value.kind != JSON_NUMBER) return false;
    size_t i = 0;
    bool negative = value.start[0] == '-';
    if (negative) i++;
    if (i == value.len) return false;
    int64_t result = 0;
    for (; i < value.len; i++) {
        char c = value.start[i];
        if (c < '0' || c > '9') return false;
        if (result > (INT64_MAX - (c - '0')) / 10) return false;
        result = result * 10 + (c - '0');
    }
    *out = negative ? -result : result;
    return true;
}

bool json_get_bool(const char *text, const char *key, bool *out) {
    json_value_t value;
    if (!json_find(text, key, &value)) return false;
    if (value.kind == JSON_TRUE) *out = true;
    else if (value.kind == JSON_FALSE) *out = false;
    else return false;
    return true;
}

bool json_put_string(char *out, size_t cap, size_t *len, const char *value) {
    static const char hex[] = "0123456789abcdef";
    size_t n = *len;
    if (n + 1 >= cap) return false;
    out[n++] = '"';
    for (const char *p = value; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\') {
            if (n + 2 >= cap) return false;
            out[n++] = '\\';
            out[n++] = (char)c;
        } else if (c < 0x20) {
            if (n + 6 >= cap) return false;
            out[n++] = '\\';
            out[n++] = 'u';
            out[n++] = '0';
            out[n++] = '0';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        } else {
            if (n + 1 >= cap) return false;
            out[n++] = (char)c;
        }
    }
    if (n + 2 > cap) return false;
    out[n++] = '"';
    out[n] = '\0';
    *len = n;
    return true;
}
