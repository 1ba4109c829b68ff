/*
 * The HTTP port on libcurl. Checks and reports are plain blocking POSTs. A download is a GET on a
 * multi handle, read the way the core asks for it (pull): curl's write callback fills one buffer
 * and pauses the transfer until the core has taken it, so memory stays at one buffer whatever
 * the image's size.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ota_linux_internal.h"

static void head_reset(ota_http_head_t *head) {
    memset(head, 0, sizeof *head);
    head->content_length = -1;
    head->range_start = -1;
    head->total_size = -1;
}

/*
 * Reads `Name: value` header lines into the port's own head while a call fills it. libcurl also
 * delivers the trailers of a chunked body here, long after get_open returned: the port never keeps
 * a pointer to the caller's head, which lived in that call's frame.
 */
static size_t on_header(char *line, size_t size, size_t count, void *userdata) {
    ota_linux_t *port = userdata;
    size_t len = size * count;
    if (!port->head_filling) return len;
    ota_http_head_t *head = &port->head;
    if (len <= 2 && (line[0] == '\r' || line[0] == '\n')) {
        port->headers_done = 1;
        return len;
    }
    char text[256];
    size_t n = len < sizeof text - 1 ? len : sizeof text - 1;
    memcpy(text, line, n);
    text[n] = '\0';
    while (n > 0 && (text[n - 1] == '\r' || text[n - 1] == '\n' || text[n - 1] == ' ')) text[--n] = '\0';
    if (strncmp(text, "HTTP/", 5) == 0) {
        /* A new status line (after a 100 Continue): the head starts again. */
        head_reset(head);
        port->headers_done = 0;
        return len;
    }
    char *colon = strchr(text, ':');
    if (!colon) return len;
    *colon = '\0';
    char *value = colon + 1;
    while (*value == ' ') value++;
    if (strcasecmp(text, "etag") == 0) {
        snprintf(head->etag, sizeof head->etag, "%s", value);
    } else if (strcasecmp(text, "retry-after") == 0 && isdigit((unsigned char)*value)) {
        head->retry_after_s = (uint32_t)strtoul(value, NULL, 10);
    } else if (strcasecmp(text, "content-length") == 0 && isdigit((unsigned char)*value)) {
        head->content_length = strtoll(value, NULL, 10);
    } else if (strcasecmp(text, "content-range") == 0 && strncmp(value, "bytes ", 6) == 0) {
        const char *range = value + 6;
        const char *slash = strchr(range, '/');
        if (slash && isdigit((unsigned char)slash[1])) head->total_size = strtoll(slash + 1, NULL, 10);
        if (isdigit((unsigned char)*range)) head->range_start = strtoll(range, NULL, 10);
    }
    return len;
}

static void head_open(ota_linux_t *port) {
    head_reset(&port->head);
    port->head_filling = 1;
}

/* The head as its headers left it, for the caller; later header lines change nothing it holds. */
static void head_close(ota_linux_t *port, ota_http_head_t *out, int status) {
    port->head_filling = 0;
    port->head.status = status;
    *out = port->head;
}

static size_t on_post_body(char *data, size_t size, size_t count, void *userdata) {
    ota_linux_t *port = userdata;
    size_t len = size * count;
    if (port->response_len + len >= port->response_cap) {
        port->response_overflow = 1;
        return len;
    }
    memcpy(port->response + port->response_len, data, len);
    port->response_len += len;
    port->response[port->response_len] = '\0';
    return len;
}

/* POSTs `len` bytes of `body` as `content_type`; the answer's body into resp, its head into head. */
static ota_err_t post(ota_linux_t *port, const char *url, const char *bearer, const char *content_type, const void *body, size_t len, char *resp,
                      size_t resp_cap, ota_http_head_t *head) {
    if (!port->post) port->post = curl_easy_init();
    if (!port->post) return OTA_ERR_IO;
    CURL *curl = port->post;
    curl_easy_reset(curl);
    head_reset(head);
    head_open(port);
    port->response = resp;
    port->response_len = 0;
    port->response_cap = resp_cap;
    port->response_overflow = 0;
    resp[0] = '\0';
    char authorization[512];
    snprintf(authorization, sizeof authorization, "Authorization: Bearer %s", bearer);
    char type[64];
    snprintf(type, sizeof type, "Content-Type: %s", content_type);
    struct curl_slist *headers = curl_slist_append(NULL, type);
    headers = curl_slist_append(headers, authorization);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)len);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_post_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, port);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, port);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, (long)port->options.request_timeout_s);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
    CURLcode result = curl_easy_perform(curl);
    curl_slist_free_all(headers);
    port->head_filling = 0;
    if (result != CURLE_OK) return OTA_ERR_IO;
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    head_close(port, head, (int)status);
    return port->response_overflow ? OTA_ERR_NO_SPACE : OTA_OK;
}

static ota_err_t post_json(void *ctx, const char *url, const char *bearer, const char *body, char *resp, size_t resp_cap, ota_http_head_t *head) {
    return post(ctx, url, bearer, "application/json", body, strlen(body), resp, resp_cap, head);
}

static ota_err_t post_bytes(void *ctx, const char *url, const char *bearer, const uint8_t *body, size_t len, char *resp, size_t resp_cap,
                            ota_http_head_t *head) {
    return post(ctx, url, bearer, "application/octet-stream", body, len, resp, resp_cap, head);
}

static size_t on_get_body(char *data, size_t size, size_t count, void *userdata) {
    ota_linux_t *port = userdata;
    size_t len = size * count;
    if (port->consumed < port->buffered || len > sizeof port->buffer) {
        /* The core has not taken the last piece yet: curl keeps this one until we resume it. */
        port->paused = 1;
        return CURL_WRITEFUNC_PAUSE;
    }
    memcpy(port->buffer, data, len);
    port->buffered = len;
    port->consumed = 0;
    return len;
}

/* Lets curl move the transfer on, waiting at most a second for the socket. */
static void drive(ota_linux_t *port) {
    int running = 0;
    curl_multi_perform(port->multi, &running);
    int left = 0;
    CURLMsg *message;
    while ((message = curl_multi_info_read(port->multi, &left))) {
        if (message->msg == CURLMSG_DONE && message->easy_handle == port->get) {
            port->get_done = 1;
            port->get_result = message->data.result;
        }
    }
    if (!port->get_done && port->consumed >= port->buffered) curl_multi_poll(port->multi, NULL, 0, 1000, NULL);
}

static void get_close(void *ctx) {
    ota_linux_t *port = ctx;
    if (port->get) {
        curl_multi_remove_handle(port->multi, port->get);
        curl_easy_cleanup(port->get);
        port->get = NULL;
    }
    if (port->headers) curl_slist_free_all(port->headers);
    port->headers = NULL;
    port->head_filling = 0;
    port->buffered = port->consumed = 0;
}

static ota_err_t get_open(void *ctx, const char *url, uint32_t range_start, const char *if_range, ota_http_head_t *head) {
    ota_linux_t *port = ctx;
    get_close(port);
    if (!port->multi) port->multi = curl_multi_init();
    port->get = curl_easy_init();
    if (!port->multi || !port->get) return OTA_ERR_IO;
    head_reset(head);
    head_open(port);
    port->get_done = 0;
    port->get_result = CURLE_OK;
    port->paused = 0;
    char line[128];
    if (range_start > 0) {
        snprintf(line, sizeof line, "Range: bytes=%lu-", (unsigned long)range_start);
        port->headers = curl_slist_append(port->headers, line);
    }
    if (if_range && *if_range) {
        snprintf(line, sizeof line, "If-Range: %s", if_range);
        port->headers = curl_slist_append(port->headers, line);
    }
    CURL *curl = port->get;
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, port->headers);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_get_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, port);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, port);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
    /* A stall: less than one byte a second for stall_timeout_s ends the transfer. */
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, (long)port->options.stall_timeout_s);
    curl_multi_add_handle(port->multi, curl);
    port->headers_done = 0;
    while (!port->get_done && !port->headers_done) drive(port);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    if (status == 0) return OTA_ERR_IO;
    head_close(port, head, (int)status);
    return OTA_OK;
}

static ota_err_t get_read(void *ctx, uint8_t *buf, size_t cap, size_t *n) {
    ota_linux_t *port = ctx;
    *n = 0;
    if (!port->get) return OTA_ERR_STATE;
    for (;;) {
        if (port->consumed < port->buffered) {
            size_t available = port->buffered - port->consumed;
            *n = available < cap ? available : cap;
            memcpy(buf, port->buffer + port->consumed, *n);
            port->consumed += *n;
            return OTA_OK;
        }
        if (port->get_done) return port->get_result == CURLE_OK ? OTA_OK : OTA_ERR_IO;
        if (port->paused) {
            port->paused = 0;
            curl_easy_pause(port->get, CURLPAUSE_CONT);
            continue;
        }
        drive(port);
    }
}

void ota_linux_http_bind(ota_linux_t *port) {
    port->ports.http = (ota_http_port_t){
        .ctx = port,
        .post_json = post_json,
        .get_open = get_open,
        .get_read = get_read,
        .get_close = get_close,
        .post_bytes = post_bytes,
    };
}

void ota_linux_http_close(ota_linux_t *port) {
    get_close(port);
    if (port->multi) curl_multi_cleanup(port->multi);
    if (port->post) curl_easy_cleanup(port->post);
    port->multi = NULL;
    port->post = NULL;
}
