/*
 * Byte-level encoding shared by every backend: little-endian buffers, the metadata codec, the
 * framed protocol of the control/tcp connection, and blocking socket I/O with timeouts.
 * The Java engine (io.flotilla.transfer.Wire, AgentMetadata) implements the same formats.
 */
#include "ft_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

int ft_fail(ft_error *err, int code, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* ---- buffers ---- */

static void buf_reserve(ft_buf *b, size_t extra) {
    if (b->oom || b->len + extra <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra) cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) { b->oom = 1; return; }
    b->p = p;
    b->cap = cap;
}

void ft_buf_bytes(ft_buf *b, const void *p, size_t n) {
    buf_reserve(b, n);
    if (b->oom || n == 0) return;
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

void ft_buf_u8(ft_buf *b, uint8_t v) { ft_buf_bytes(b, &v, 1); }
void ft_buf_u16(ft_buf *b, uint16_t v) { uint8_t t[2] = {(uint8_t)v, (uint8_t)(v >> 8)}; ft_buf_bytes(b, t, 2); }
void ft_buf_u32(ft_buf *b, uint32_t v) { uint8_t t[4]; ft_put_u32(t, v); ft_buf_bytes(b, t, 4); }
void ft_buf_u64(ft_buf *b, uint64_t v) { uint8_t t[8]; ft_put_u64(t, v); ft_buf_bytes(b, t, 8); }

void ft_buf_str16(ft_buf *b, const char *s) {
    size_t n = s ? strlen(s) : 0;
    if (n > 0xFFFF) n = 0xFFFF;
    ft_buf_u16(b, (uint16_t)n);
    ft_buf_bytes(b, s, n);
}

void ft_put_u32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
void ft_put_u64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
uint32_t ft_get_u32(const uint8_t *p) { uint32_t v = 0; for (int i = 3; i >= 0; i--) v = (v << 8) | p[i]; return v; }
uint64_t ft_get_u64(const uint8_t *p) { uint64_t v = 0; for (int i = 7; i >= 0; i--) v = (v << 8) | p[i]; return v; }

/* ---- reader ---- */

const uint8_t *ft_rd_bytes(ft_rd *r, size_t n) {
    if (r->bad || n > r->len - r->pos) { r->bad = 1; return NULL; }
    const uint8_t *p = r->p + r->pos;
    r->pos += n;
    return p;
}

uint8_t ft_rd_u8(ft_rd *r) { const uint8_t *p = ft_rd_bytes(r, 1); return p ? p[0] : 0; }
uint16_t ft_rd_u16(ft_rd *r) { const uint8_t *p = ft_rd_bytes(r, 2); return p ? (uint16_t)(p[0] | (p[1] << 8)) : 0; }
uint32_t ft_rd_u32(ft_rd *r) { const uint8_t *p = ft_rd_bytes(r, 4); return p ? ft_get_u32(p) : 0; }
uint64_t ft_rd_u64(ft_rd *r) { const uint8_t *p = ft_rd_bytes(r, 8); return p ? ft_get_u64(p) : 0; }

int ft_rd_str16(ft_rd *r, char *dst, size_t cap) {
    uint16_t n = ft_rd_u16(r);
    const uint8_t *p = ft_rd_bytes(r, n);
    if (!p || (size_t)n + 1 > cap) { r->bad = 1; return -1; }
    memcpy(dst, p, n);
    dst[n] = 0;
    if (memchr(dst, 0, n)) { r->bad = 1; return -1; }
    return 0;
}

/* ---- metadata ----
 * u32 magic "FLTM", u16 version, str16 name, u64 instance, str16 host id, u32 backends,
 * str16 tcp host, u16 tcp port, u32+bytes ucx worker address, u32 region count, then per region:
 * u64 id, u64 base, u64 length, u8 kind, u8 shared, str16 shm name, u32+bytes ucx rkey.
 * The caller holds a->mu. */
int ft_meta_encode(ft_agent *a, ft_buf *b, ft_error *err) {
    const uint8_t *addr;
    size_t addr_len;
    ft_ucx_worker_address(a, &addr, &addr_len);
    ft_buf_u32(b, FT_MAGIC_META);
    ft_buf_u16(b, FT_WIRE_VERSION);
    ft_buf_str16(b, a->name);
    ft_buf_u64(b, a->instance);
    ft_buf_str16(b, a->host_id);
    ft_buf_u32(b, a->backends);
    ft_buf_str16(b, a->listen_host);
    ft_buf_u16(b, (uint16_t)a->listen_port);
    ft_buf_u32(b, (uint32_t)addr_len);
    ft_buf_bytes(b, addr, addr_len);
    uint32_t count = 0;
    for (ft_region *r = a->regions; r; r = r->next) count += !r->dead;
    ft_buf_u32(b, count);
    for (ft_region *r = a->regions; r; r = r->next) {
        if (r->dead) continue;
        const uint8_t *rkey;
        size_t rkey_len;
        ft_ucx_rkey(r, &rkey, &rkey_len);
        ft_buf_u64(b, r->id);
        ft_buf_u64(b, (uint64_t)(uintptr_t)r->base);
        ft_buf_u64(b, r->len);
        ft_buf_u8(b, (uint8_t)r->kind);
        ft_buf_u8(b, (uint8_t)r->shared);
        ft_buf_str16(b, r->shared ? r->shm_name : "");
        ft_buf_u32(b, (uint32_t)rkey_len);
        ft_buf_bytes(b, rkey, rkey_len);
    }
    return b->oom ? ft_fail(err, FT_ENOMEM, "out of memory encoding metadata") : FT_OK;
}

void ft_remote_free_fields(ft_remote *r) {
    for (uint32_t i = 0; i < r->nregions; i++) free(r->regions[i].rkey);
    free(r->regions);
    free(r->ucx_addr);
    r->regions = NULL;
    r->nregions = 0;
    r->ucx_addr = NULL;
}

int ft_meta_decode(const uint8_t *buf, size_t len, ft_remote **out, ft_error *err) {
    ft_rd rd = {buf, len, 0, 0};
    ft_remote *r = calloc(1, sizeof *r);
    if (!r) return ft_fail(err, FT_ENOMEM, "out of memory");
    if (ft_rd_u32(&rd) != FT_MAGIC_META) { free(r); return ft_fail(err, FT_EPROTO, "not Flotilla transfer metadata"); }
    uint16_t version = ft_rd_u16(&rd);
    if (version != FT_WIRE_VERSION) { free(r); return ft_fail(err, FT_EPROTO, "metadata version %u, expected %u", version, FT_WIRE_VERSION); }
    ft_rd_str16(&rd, r->name, sizeof r->name);
    r->instance = ft_rd_u64(&rd);
    ft_rd_str16(&rd, r->host_id, sizeof r->host_id);
    r->backends = ft_rd_u32(&rd);
    ft_rd_str16(&rd, r->tcp_host, sizeof r->tcp_host);
    r->tcp_port = ft_rd_u16(&rd);
    r->ucx_addr_len = ft_rd_u32(&rd);
    const uint8_t *addr = ft_rd_bytes(&rd, r->ucx_addr_len);
    if (addr && r->ucx_addr_len) {
        r->ucx_addr = malloc(r->ucx_addr_len);
        if (r->ucx_addr) memcpy(r->ucx_addr, addr, r->ucx_addr_len);
        else rd.bad = 1;
    }
    uint32_t n = ft_rd_u32(&rd);
    /* each region takes at least 32 bytes: reject counts the buffer cannot hold before allocating */
    if (!rd.bad && n > (rd.len - rd.pos) / 32) rd.bad = 1;
    if (!rd.bad && n) {
        r->regions = calloc(n, sizeof *r->regions);
        if (!r->regions) rd.bad = 1;
    }
    for (uint32_t i = 0; i < n && !rd.bad; i++) {
        ft_rregion *g = &r->regions[i];
        r->nregions = i + 1;
        g->id = ft_rd_u64(&rd);
        g->base = ft_rd_u64(&rd);
        g->len = ft_rd_u64(&rd);
        g->kind = ft_rd_u8(&rd);
        g->shared = ft_rd_u8(&rd);
        ft_rd_str16(&rd, g->shm_name, sizeof g->shm_name);
        g->rkey_len = ft_rd_u32(&rd);
        const uint8_t *k = ft_rd_bytes(&rd, g->rkey_len);
        if (k && g->rkey_len) {
            g->rkey = malloc(g->rkey_len);
            if (g->rkey) memcpy(g->rkey, k, g->rkey_len);
            else rd.bad = 1;
        }
        if (g->id == FT_REGION_ADDR || g->base + g->len < g->base) rd.bad = 1;
    }
    if (rd.bad || rd.pos != rd.len || r->name[0] == 0) {
        ft_remote_free_fields(r);
        free(r);
        return ft_fail(err, FT_EPROTO, "malformed agent metadata (%zu bytes)", len);
    }
    r->refs = 1;
    *out = r;
    return FT_OK;
}

/* ---- sockets ---- */

static int io_error(ft_error *err, const char *what) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return ft_fail(err, FT_ETIMEOUT, "%s timed out", what);
    return ft_fail(err, FT_EIO, "%s failed: %s", what, strerror(errno));
}

int ft_send_all(int fd, const void *p, size_t n, ft_error *err) {
    const uint8_t *c = p;
    while (n > 0) {
        ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return io_error(err, "send");
        c += k;
        n -= (size_t)k;
    }
    return FT_OK;
}

int ft_recv_all(int fd, void *p, size_t n, ft_error *err) {
    uint8_t *c = p;
    while (n > 0) {
        ssize_t k = recv(fd, c, n, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k == 0) return ft_fail(err, FT_EIO, "connection closed by peer");
        if (k < 0) return io_error(err, "recv");
        c += k;
        n -= (size_t)k;
    }
    return FT_OK;
}

int ft_drain(int fd, uint64_t n, ft_error *err) {
    uint8_t scratch[16384];
    while (n > 0) {
        size_t k = n < sizeof scratch ? (size_t)n : sizeof scratch;
        int rc = ft_recv_all(fd, scratch, k, err);
        if (rc) return rc;
        n -= k;
    }
    return FT_OK;
}

void ft_set_timeouts(int fd, int ms) {
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* Request: u32 magic, u8 op, u8 flags, u16 0, u32 ndesc, u32 notif_len, u64 lease, u64 0;
 * then ndesc x (u64 region, u64 offset, u64 length), then the notification. */
int ft_send_request(int fd, int op, int flags, uint64_t lease, const ft_desc *d, size_t n,
                    const uint8_t *notif, size_t notif_len, int more, ft_error *err) {
    ft_buf b = {0};
    ft_buf_u32(&b, FT_MAGIC_REQ);
    ft_buf_u8(&b, (uint8_t)op);
    ft_buf_u8(&b, (uint8_t)flags);
    ft_buf_u16(&b, 0);
    ft_buf_u32(&b, (uint32_t)n);
    ft_buf_u32(&b, (uint32_t)notif_len);
    ft_buf_u64(&b, lease);
    ft_buf_u64(&b, 0);
    for (size_t i = 0; i < n; i++) {
        ft_buf_u64(&b, d[i].region);
        ft_buf_u64(&b, d[i].offset);
        ft_buf_u64(&b, d[i].length);
    }
    ft_buf_bytes(&b, notif, notif_len);
    if (b.oom) { free(b.p); return ft_fail(err, FT_ENOMEM, "out of memory"); }
    int rc = FT_OK;
    const uint8_t *c = b.p;
    size_t left = b.len;
    while (left > 0) {
        ssize_t k = send(fd, c, left, MSG_NOSIGNAL | (more ? MSG_MORE : 0));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) { rc = io_error(err, "send"); break; }
        c += k;
        left -= (size_t)k;
    }
    free(b.p);
    return rc;
}

/* Response: u32 magic, i32 code, u64 lease, u32 msg_len, u32 0; then the message. */
int ft_send_response(int fd, int code, uint64_t lease, const char *msg) {
    size_t n = msg ? strlen(msg) : 0;
    uint8_t h[FT_RESP_HDR_LEN + FT_MSG_MAX];
    if (n > FT_MSG_MAX) n = FT_MSG_MAX;
    ft_put_u32(h, FT_MAGIC_RESP);
    ft_put_u32(h + 4, (uint32_t)code);
    ft_put_u64(h + 8, lease);
    ft_put_u32(h + 16, (uint32_t)n);
    ft_put_u32(h + 20, 0);
    if (n) memcpy(h + FT_RESP_HDR_LEN, msg, n);
    return ft_send_all(fd, h, FT_RESP_HDR_LEN + n, NULL);
}

int ft_recv_response(int fd, uint64_t *lease, ft_error *err) {
    uint8_t h[FT_RESP_HDR_LEN];
    int rc = ft_recv_all(fd, h, sizeof h, err);
    if (rc) return rc;
    if (ft_get_u32(h) != FT_MAGIC_RESP) return ft_fail(err, FT_EPROTO, "peer sent a malformed response");
    int code = (int)ft_get_u32(h + 4);
    uint32_t msg_len = ft_get_u32(h + 16);
    if (lease) *lease = ft_get_u64(h + 8);
    if (msg_len > 65536) return ft_fail(err, FT_EPROTO, "peer sent a %u-byte message", msg_len);
    char msg[FT_MSG_MAX];
    size_t keep = msg_len < sizeof msg - 1 ? msg_len : sizeof msg - 1;
    if ((rc = ft_recv_all(fd, msg, keep, err)) || (rc = ft_drain(fd, msg_len - keep, err))) return rc;
    msg[keep] = 0;
    if (code == FT_OK) return FT_OK;
    if (code < 0 || code > FT_EPROTO) code = FT_EPROTO;
    return ft_fail(err, code, "target: %s", msg);
}
