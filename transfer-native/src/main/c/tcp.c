/*
 * The tcp backend and every agent's control channel.
 *
 * Each agent runs a listener thread; every accepted connection gets a thread that serves framed
 * requests (wire.c) against this agent's registered regions:
 *   READ    validate + pin, answer, stream the bytes; with a notification, queue it and answer again
 *   WRITE   validate + pin, receive the bytes into the regions (or drain them if invalid), answer
 *   NOTIF   queue the notification, answer
 *   LEASE   validate + pin for a one-sided (shm, ucx) transfer, answer with a lease id
 *   RELEASE unpin a lease of this connection, queue its notification, answer if asked
 * A connection starts with a hello naming the initiator and the target (name + instance); a target
 * that is not the addressed agent refuses it (a restarted peer reuses its name, not its instance).
 * Every descriptor is checked against registered regions before memory is touched.
 */
#include "ft_impl.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define IOV_BATCH 64

typedef struct lease {
    uint64_t id;
    size_t n;
    ft_region **pins;
    struct lease *next;
} lease;

/* Sends or receives the concatenation of n (pointer, length) pieces. */
static int iov_io(int fd, int sending, uint8_t **ptrs, const ft_desc *d, size_t n, ft_error *err) {
    size_t i = 0;
    uint64_t done = 0; /* bytes of piece i already moved */
    while (i < n) {
        struct iovec iov[IOV_BATCH];
        int k = 0;
        for (size_t j = i; j < n && k < IOV_BATCH; j++, k++) {
            uint64_t skip = j == i ? done : 0;
            iov[k].iov_base = ptrs[j] + skip;
            iov[k].iov_len = (size_t)(d[j].length - skip);
        }
        struct msghdr m = {0};
        m.msg_iov = iov;
        m.msg_iovlen = (size_t)k;
        ssize_t got = sending ? sendmsg(fd, &m, MSG_NOSIGNAL) : recvmsg(fd, &m, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got == 0 && !sending) return ft_fail(err, FT_EIO, "connection closed by peer");
        if (got <= 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) return ft_fail(err, FT_ETIMEOUT, "%s timed out", sending ? "send" : "recv");
            return ft_fail(err, FT_EIO, "%s failed: %s", sending ? "send" : "recv", strerror(errno));
        }
        uint64_t left = (uint64_t)got;
        while (left > 0) {
            uint64_t rest = d[i].length - done;
            if (left >= rest) { left -= rest; i++; done = 0; }
            else { done += left; left = 0; }
        }
    }
    return FT_OK;
}

static void tune(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* ---- server ---- */

static int read_descs(int fd, uint32_t n, ft_desc **out, ft_error *err) {
    *out = NULL;
    if (n == 0) return FT_OK;
    uint8_t *raw = malloc((size_t)n * FT_DESC_WIRE_LEN);
    ft_desc *d = calloc(n, sizeof *d);
    int rc = !raw || !d ? ft_fail(err, FT_ENOMEM, "out of memory") : ft_recv_all(fd, raw, (size_t)n * FT_DESC_WIRE_LEN, err);
    for (uint32_t i = 0; rc == FT_OK && i < n; i++) {
        d[i].region = ft_get_u64(raw + i * FT_DESC_WIRE_LEN);
        d[i].offset = ft_get_u64(raw + i * FT_DESC_WIRE_LEN + 8);
        d[i].length = ft_get_u64(raw + i * FT_DESC_WIRE_LEN + 16);
    }
    free(raw);
    if (rc != FT_OK) free(d);
    else *out = d;
    return rc;
}

typedef struct {
    ft_agent *a;
    int fd;
    char peer[FT_NAME_MAX];
    lease *leases;
    uint64_t next_lease;
} session;

static int hello(session *s) {
    ft_error err = {0};
    uint8_t h[8];
    char target[FT_NAME_MAX];
    if (ft_recv_all(s->fd, h, 8, &err) || ft_get_u32(h) != FT_MAGIC_HELLO) return -1;
    uint16_t version = (uint16_t)(h[4] | h[5] << 8), ilen = (uint16_t)(h[6] | h[7] << 8);
    uint8_t tl[2], inst[8];
    if (version != FT_WIRE_VERSION) {
        ft_send_response(s->fd, FT_EPROTO, 0, "unsupported protocol version");
        return -1;
    }
    if (ilen >= FT_NAME_MAX || ft_recv_all(s->fd, s->peer, ilen, &err) || ft_recv_all(s->fd, tl, 2, &err)) return -1;
    s->peer[ilen] = 0;
    uint16_t tlen = (uint16_t)(tl[0] | tl[1] << 8);
    if (tlen >= FT_NAME_MAX || ft_recv_all(s->fd, target, tlen, &err) || ft_recv_all(s->fd, inst, 8, &err)) return -1;
    target[tlen] = 0;
    if (strcmp(target, s->a->name) != 0 || ft_get_u64(inst) != s->a->instance) {
        char msg[2 * FT_NAME_MAX + 80];
        snprintf(msg, sizeof msg, "unknown agent '%s': this endpoint serves '%s' (another instance or name)", target, s->a->name);
        ft_send_response(s->fd, FT_EUNKNOWN_AGENT, 0, msg);
        return -1;
    }
    return ft_send_response(s->fd, FT_OK, 0, NULL) == FT_OK ? 0 : -1;
}

/* Serves one request frame; returns 0 to keep the connection, -1 to close it. */
static int serve(session *s, const uint8_t *h) {
    ft_agent *a = s->a;
    ft_error err = {0};
    int op = h[4], flags = h[5];
    uint32_t n = ft_get_u32(h + 8), notif_len = ft_get_u32(h + 12);
    uint64_t lease_id = ft_get_u64(h + 16);
    if (ft_get_u32(h) != FT_MAGIC_REQ || n > FT_DESC_MAX || notif_len > FT_NOTIF_MAX) {
        ft_send_response(s->fd, FT_EPROTO, 0, "malformed request frame");
        return -1;
    }
    ft_desc *d = NULL;
    uint8_t *notif = notif_len ? malloc(notif_len) : NULL;
    if ((notif_len && !notif) || read_descs(s->fd, n, &d, &err) || ft_recv_all(s->fd, notif, notif_len, &err)) {
        free(notif);
        free(d);
        return -1;
    }
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (total + d[i].length < total) { free(d); free(notif); return -1; }
        total += d[i].length;
    }
    ft_region **pins = n ? calloc(n, sizeof *pins) : NULL;
    uint8_t **ptrs = n ? calloc(n, sizeof *ptrs) : NULL;
    int keep = 0, rc;
    if (n && (!pins || !ptrs)) {
        keep = -1;
        goto out;
    }
    switch (op) {
    case FT_WOP_READ:
    case FT_WOP_WRITE:
        if (!(a->backends & FT_BACKEND_TCP)) rc = ft_fail(&err, FT_EUNSUPPORTED, "tcp backend disabled on '%s'", a->name);
        else if (n == 0) rc = ft_fail(&err, FT_EINVAL, "request without descriptors");
        else rc = ft_pin_regions(a, d, n, pins, ptrs, &err);
        if (rc != FT_OK) {
            if (op == FT_WOP_WRITE && ft_drain(s->fd, total, NULL)) keep = -1;
            else keep = ft_send_response(s->fd, rc, 0, err.msg) ? -1 : 0;
            break;
        }
        if (op == FT_WOP_READ) {
            if (ft_send_response(s->fd, FT_OK, 0, NULL) || iov_io(s->fd, 1, ptrs, d, n, &err)) keep = -1;
        } else if (iov_io(s->fd, 0, ptrs, d, n, &err)) {
            keep = -1;
        }
        ft_unpin_regions(a, pins, n);
        if (keep == 0) {
            rc = notif_len || op == FT_WOP_WRITE ? FT_OK : -1;
            if (notif_len) rc = ft_notif_push(a, s->peer, notif, notif_len, &err);
            if (rc != -1 && ft_send_response(s->fd, rc, 0, rc ? err.msg : NULL)) keep = -1;
        }
        break;
    case FT_WOP_NOTIF:
        rc = ft_notif_push(a, s->peer, notif, notif_len, &err);
        keep = ft_send_response(s->fd, rc, 0, rc ? err.msg : NULL) ? -1 : 0;
        break;
    case FT_WOP_LEASE: {
        lease *l = calloc(1, sizeof *l);
        if (!(a->backends & (FT_BACKEND_SHM | FT_BACKEND_UCX))) rc = ft_fail(&err, FT_EUNSUPPORTED, "no one-sided backend on '%s'", a->name);
        else if (n == 0) rc = ft_fail(&err, FT_EINVAL, "lease without descriptors");
        else if (!l) rc = ft_fail(&err, FT_ENOMEM, "out of memory");
        else rc = ft_pin_regions(a, d, n, pins, NULL, &err);
        if (rc == FT_OK) {
            l->id = ++s->next_lease;
            l->n = n;
            l->pins = pins;
            pins = NULL;
            l->next = s->leases;
            s->leases = l;
        } else {
            free(l);
        }
        keep = ft_send_response(s->fd, rc, rc ? 0 : l->id, rc ? err.msg : NULL) ? -1 : 0;
        break;
    }
    case FT_WOP_RELEASE: {
        lease **link = &s->leases;
        while (*link && (*link)->id != lease_id) link = &(*link)->next;
        lease *l = *link;
        if (!l) { keep = -1; break; }
        *link = l->next;
        ft_unpin_regions(a, l->pins, l->n);
        free(l->pins);
        free(l);
        rc = notif_len ? ft_notif_push(a, s->peer, notif, notif_len, &err) : FT_OK;
        if ((flags & FT_WFLAG_ACK) && ft_send_response(s->fd, rc, lease_id, rc ? err.msg : NULL)) keep = -1;
        break;
    }
    default:
        ft_send_response(s->fd, FT_EPROTO, 0, "unknown operation");
        keep = -1;
    }
out:
    free(pins);
    free(ptrs);
    free(d);
    free(notif);
    return keep;
}

static void *conn_main(void *arg) {
    ft_conn *c = arg;
    session s = {c->agent, c->fd, {0}, NULL, 0};
    tune(c->fd);
    ft_set_timeouts(c->fd, c->agent->io_timeout_ms);
    if (hello(&s) == 0) {
        for (;;) {
            struct pollfd p = {c->fd, POLLIN, 0};
            if (poll(&p, 1, -1) < 0 && errno == EINTR) continue; /* idle connections wait without a timeout */
            uint8_t h[FT_REQ_HDR_LEN];
            if (ft_recv_all(c->fd, h, sizeof h, NULL) || serve(&s, h) != 0) break;
        }
    }
    while (s.leases) { /* a vanished initiator must not keep regions pinned */
        lease *l = s.leases;
        s.leases = l->next;
        ft_unpin_regions(c->agent, l->pins, l->n);
        free(l->pins);
        free(l);
    }
    shutdown(c->fd, SHUT_RDWR);
    pthread_mutex_lock(&c->agent->mu);
    c->finished = 1;
    pthread_mutex_unlock(&c->agent->mu);
    return NULL;
}

/* Joins finished connection threads (all of them when everything), closing their sockets. */
static void reap(ft_agent *a, int everything) {
    pthread_mutex_lock(&a->mu);
    ft_conn **link = &a->conns, *done = NULL;
    while (*link) {
        ft_conn *c = *link;
        if (everything || c->finished) {
            *link = c->next;
            c->next = done;
            done = c;
        } else {
            link = &c->next;
        }
    }
    pthread_mutex_unlock(&a->mu);
    while (done) {
        ft_conn *c = done;
        done = c->next;
        pthread_join(c->thread, NULL);
        close(c->fd);
        free(c);
    }
}

static int stopping(ft_agent *a) {
    pthread_mutex_lock(&a->qmu);
    int s = a->closing;
    pthread_mutex_unlock(&a->qmu);
    return s;
}

static void *listener_main(void *arg) {
    ft_agent *a = arg;
    for (;;) {
        int fd = accept4(a->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (stopping(a)) return NULL;
            if (errno != EINTR && errno != ECONNABORTED) usleep(10000);
            continue;
        }
        reap(a, 0);
        ft_conn *c = calloc(1, sizeof *c);
        if (!c) { close(fd); continue; }
        c->fd = fd;
        c->agent = a;
        pthread_mutex_lock(&a->mu);
        int ok = pthread_create(&c->thread, NULL, conn_main, c) == 0;
        if (ok) {
            c->next = a->conns;
            a->conns = c;
        }
        pthread_mutex_unlock(&a->mu);
        if (!ok) { close(fd); free(c); }
    }
}

int ft_tcp_start(ft_agent *a, const char *host, int port, ft_error *err) {
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    int g = getaddrinfo(host, ps, &hints, &res);
    if (g != 0) return ft_fail(err, FT_EIO, "cannot resolve listen address '%s': %s", host, gai_strerror(g));
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 128) != 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        freeaddrinfo(res);
        return ft_fail(err, FT_EIO, "cannot listen on %s:%d: %s", host, port, strerror(e));
    }
    freeaddrinfo(res);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    a->listen_port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
    snprintf(a->listen_host, sizeof a->listen_host, "%s", host);
    a->listen_fd = fd;
    if (pthread_create(&a->listener, NULL, listener_main, a) != 0) {
        close(fd);
        a->listen_fd = -1;
        return ft_fail(err, FT_ENOMEM, "cannot start listener thread");
    }
    a->listener_started = 1;
    return FT_OK;
}

void ft_tcp_stop(ft_agent *a) {
    if (a->listen_fd < 0) return;
    shutdown(a->listen_fd, SHUT_RDWR); /* wakes accept() */
    if (a->listener_started) pthread_join(a->listener, NULL);
    close(a->listen_fd);
    a->listen_fd = -1;
    pthread_mutex_lock(&a->mu);
    for (ft_conn *c = a->conns; c; c = c->next) shutdown(c->fd, SHUT_RDWR);
    pthread_mutex_unlock(&a->mu);
    reap(a, 1);
}

/* ---- client ---- */

int ft_tcp_connect(ft_agent *a, ft_remote *r, int *out, ft_error *err) {
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", r->tcp_port);
    int g = getaddrinfo(r->tcp_host, ps, &hints, &res);
    if (g != 0) return ft_fail(err, FT_EIO, "cannot resolve '%s' for agent '%s': %s", r->tcp_host, r->name, gai_strerror(g));
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) ft_set_timeouts(fd, a->io_timeout_ms);
    if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        freeaddrinfo(res);
        return ft_fail(err, FT_EIO, "cannot connect to agent '%s' at %s:%d: %s", r->name, r->tcp_host, r->tcp_port, strerror(e));
    }
    freeaddrinfo(res);
    tune(fd);
    ft_buf b = {0};
    ft_buf_u32(&b, FT_MAGIC_HELLO);
    ft_buf_u16(&b, FT_WIRE_VERSION);
    ft_buf_str16(&b, a->name);
    ft_buf_str16(&b, r->name);
    ft_buf_u64(&b, r->instance);
    int rc = b.oom ? ft_fail(err, FT_ENOMEM, "out of memory") : ft_send_all(fd, b.p, b.len, err);
    free(b.p);
    if (rc == FT_OK) rc = ft_recv_response(fd, NULL, err);
    if (rc != FT_OK) {
        close(fd);
        return rc;
    }
    *out = fd;
    return FT_OK;
}

int ft_tcp_xfer(ft_agent *a, struct ft_request *q, ft_error *err) {
    int fd, rc = ft_conn_get(a, q->remote, &fd, err);
    if (rc) return rc;
    if (q->op == FT_OP_READ) {
        rc = ft_send_request(fd, FT_WOP_READ, 0, 0, q->rdesc, q->n, q->notif, q->notif_len, 0, err);
        if (!rc) rc = ft_recv_response(fd, NULL, err);
        if (!rc) rc = iov_io(fd, 0, q->lptr, q->rdesc, q->n, err);
        if (!rc && q->notif_len) rc = ft_recv_response(fd, NULL, err);
    } else {
        rc = ft_send_request(fd, FT_WOP_WRITE, 0, 0, q->rdesc, q->n, q->notif, q->notif_len, 1, err);
        if (!rc) rc = iov_io(fd, 1, q->lptr, q->rdesc, q->n, err);
        if (!rc) rc = ft_recv_response(fd, NULL, err);
    }
    ft_conn_put(a, q->remote, fd, rc == FT_OK);
    return rc;
}

int ft_tcp_notify(ft_agent *a, ft_remote *r, const uint8_t *p, size_t n, ft_error *err) {
    int fd, rc = ft_conn_get(a, r, &fd, err);
    if (rc) return rc;
    rc = ft_send_request(fd, FT_WOP_NOTIF, 0, 0, NULL, 0, p, n, 0, err);
    if (!rc) rc = ft_recv_response(fd, NULL, err);
    ft_conn_put(a, r, fd, rc == FT_OK);
    return rc;
}

int ft_lease_acquire(ft_agent *a, ft_remote *r, const ft_desc *d, size_t n, int *fd, uint64_t *lease_id, ft_error *err) {
    int rc = ft_conn_get(a, r, fd, err);
    if (rc) return rc;
    rc = ft_send_request(*fd, FT_WOP_LEASE, 0, 0, d, n, NULL, 0, 0, err);
    if (!rc) rc = ft_recv_response(*fd, lease_id, err);
    if (rc) {
        ft_conn_put(a, r, *fd, 0);
        *fd = -1;
    }
    return rc;
}

int ft_lease_release(ft_agent *a, ft_remote *r, int fd, uint64_t lease_id, const uint8_t *notif, size_t notif_len,
                     ft_error *err) {
    int ack = notif_len > 0;
    int rc = ft_send_request(fd, FT_WOP_RELEASE, ack ? FT_WFLAG_ACK : 0, lease_id, NULL, 0, notif, notif_len, 0, err);
    if (!rc && ack) rc = ft_recv_response(fd, NULL, err);
    ft_conn_put(a, r, fd, rc == FT_OK);
    return rc;
}
