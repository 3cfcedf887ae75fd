/*
 * Remote agents and requests: loading metadata, the pool of control connections to each remote,
 * posting a transfer (initiator-side validation, backend choice, local pins) and the worker threads
 * that execute queued requests through a backend.
 */
#include "ft_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- requests ---- */

static void request_finish(struct ft_request *q, int code, const ft_error *err) {
    pthread_mutex_lock(&q->mu);
    if (q->status == FT_PENDING) {
        q->status = code == FT_OK ? FT_DONE : FT_ERROR;
        if (code != FT_OK) q->err = *err;
        pthread_cond_broadcast(&q->cv);
    }
    pthread_mutex_unlock(&q->mu);
}

void ft_remote_unref(ft_agent *a, ft_remote *r) {
    pthread_mutex_lock(&a->mu);
    int last = --r->refs == 0;
    pthread_mutex_unlock(&a->mu);
    if (!last) return;
    for (int i = 0; i < r->nidle; i++) close(r->idle[i]);
    ft_shm_unmap_remote(r);
    ft_ucx_unload_remote(r);
    ft_remote_free_fields(r);
    free(r);
}

/* Drops what the request holds on the agent (pins, remote); runs once, on a worker thread. */
static void request_detach(ft_agent *a, struct ft_request *q) {
    ft_unpin_regions(a, q->lpin, q->n);
    ft_remote_unref(a, q->remote);
    q->remote = NULL;
}

void ft_request_release(ft_request *q) {
    if (!q) return;
    pthread_mutex_lock(&q->mu);
    int last = --q->refs == 0;
    pthread_mutex_unlock(&q->mu);
    if (!last) return;
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
    free(q->rdesc);
    free(q->rreg);
    free(q->lptr);
    free(q->lpin);
    free(q->notif);
    free(q);
}

static void execute(ft_agent *a, struct ft_request *q) {
    pthread_mutex_lock(&a->qmu);
    int closing = a->closing;
    pthread_mutex_unlock(&a->qmu);
    pthread_mutex_lock(&q->mu);
    int run = q->status == FT_PENDING && !closing;
    q->started = run;
    pthread_mutex_unlock(&q->mu);
    ft_error err = {0};
    int rc = FT_OK;
    if (!run) {
        rc = ft_fail(&err, FT_ECLOSED, "agent '%s' closed before the request ran", a->name);
    } else if (q->backend == FT_BACKEND_SHM) {
        rc = ft_shm_xfer(a, q, &err);
    } else if (q->backend == FT_BACKEND_UCX) {
        rc = ft_ucx_xfer(a, q, &err);
    } else {
        rc = ft_tcp_xfer(a, q, &err);
    }
    if (run && rc != FT_OK) { /* say which backend failed: "shm: target: region 3 ..." */
        char msg[FT_MSG_MAX + 8];
        const char *name = q->backend == FT_BACKEND_SHM ? "shm" : q->backend == FT_BACKEND_UCX ? "ucx" : "tcp";
        snprintf(msg, sizeof msg, "%s: %s", name, err.msg);
        size_t k = strlen(msg) < sizeof err.msg ? strlen(msg) : sizeof err.msg - 1; /* may cut the last few characters */
        memcpy(err.msg, msg, k);
        err.msg[k] = 0;
    }
    request_detach(a, q);
    request_finish(q, rc, &err);
    ft_request_release(q);
}

void *ft_worker_main(void *arg) {
    ft_agent *a = arg;
    for (;;) {
        pthread_mutex_lock(&a->qmu);
        while (!a->qhead && !a->closing) pthread_cond_wait(&a->qcv, &a->qmu);
        struct ft_request *q = a->qhead;
        if (q) {
            a->qhead = q->next;
            if (!a->qhead) a->qtail = NULL;
        }
        pthread_mutex_unlock(&a->qmu);
        if (!q) return NULL;
        execute(a, q);
    }
}

int ft_request_status(ft_request *q, ft_error *err) {
    pthread_mutex_lock(&q->mu);
    int s = q->status;
    if (s == FT_ERROR && err) *err = q->err;
    pthread_mutex_unlock(&q->mu);
    return s;
}

int ft_request_wait(ft_request *q, int64_t timeout_ns, ft_error *err) {
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    if (timeout_ns >= 0) {
        deadline.tv_sec += timeout_ns / 1000000000LL;
        deadline.tv_nsec += timeout_ns % 1000000000LL;
        if (deadline.tv_nsec >= 1000000000L) { deadline.tv_sec++; deadline.tv_nsec -= 1000000000L; }
    }
    pthread_mutex_lock(&q->mu);
    while (q->status == FT_PENDING) {
        if (timeout_ns < 0) pthread_cond_wait(&q->cv, &q->mu);
        else if (pthread_cond_timedwait(&q->cv, &q->mu, &deadline) == ETIMEDOUT) break;
    }
    int s = q->status;
    if (s == FT_ERROR && err) *err = q->err;
    pthread_mutex_unlock(&q->mu);
    return s;
}

int ft_request_cancel(ft_request *q) {
    pthread_mutex_lock(&q->mu);
    int cancelled = q->status == FT_PENDING && !q->started;
    if (cancelled) {
        q->status = FT_ERROR;
        ft_fail(&q->err, FT_ECANCELLED, "request cancelled before it started");
        pthread_cond_broadcast(&q->cv);
    }
    pthread_mutex_unlock(&q->mu);
    return cancelled;
}

int ft_request_backend(ft_request *q) { return q->backend; }

/* ---- remote agents ---- */

static ft_remote *unlink_remote(ft_agent *a, const char *name) {
    for (ft_remote **link = &a->remotes; *link; link = &(*link)->next) {
        if (strcmp((*link)->name, name) == 0) {
            ft_remote *r = *link;
            *link = r->next;
            return r;
        }
    }
    return NULL;
}

int ft_load_remote(uint64_t handle, const uint8_t *buf, size_t len, char *name, size_t cap, ft_error *err) {
    ft_agent *a = ft_agent_acquire(handle, err);
    if (!a) return FT_ECLOSED;
    ft_remote *r = NULL;
    int rc = ft_meta_decode(buf, len, &r, err);
    if (rc == FT_OK && strcmp(r->name, a->name) == 0 && r->instance == a->instance) {
        rc = ft_fail(err, FT_EINVAL, "metadata describes this agent ('%s')", a->name);
        ft_remote_unref(a, r);
    }
    if (rc == FT_OK) {
        ft_shm_map_remote(a, r);
        ft_ucx_load_remote(a, r);
        pthread_mutex_lock(&a->mu);
        ft_remote *old = unlink_remote(a, r->name);
        r->next = a->remotes;
        a->remotes = r;
        pthread_mutex_unlock(&a->mu);
        if (old) ft_remote_unref(a, old);
        if (name && cap) snprintf(name, cap, "%s", r->name);
    }
    ft_agent_release(a);
    return rc;
}

int ft_invalidate_remote(uint64_t handle, const char *name, ft_error *err) {
    ft_agent *a = ft_agent_acquire(handle, err);
    if (!a) return FT_ECLOSED;
    pthread_mutex_lock(&a->mu);
    ft_remote *old = unlink_remote(a, name);
    pthread_mutex_unlock(&a->mu);
    int rc = FT_OK;
    if (old) ft_remote_unref(a, old);
    else rc = ft_fail(err, FT_EUNKNOWN_AGENT, "no metadata loaded for agent '%s'", name);
    ft_agent_release(a);
    return rc;
}

/* Returns the remote with one reference taken for the caller, or NULL. */
static ft_remote *find_remote(ft_agent *a, const char *name, ft_error *err) {
    pthread_mutex_lock(&a->mu);
    ft_remote *r = a->remotes;
    while (r && strcmp(r->name, name) != 0) r = r->next;
    if (r) r->refs++;
    pthread_mutex_unlock(&a->mu);
    if (!r) ft_fail(err, FT_EUNKNOWN_AGENT, "unknown agent '%s': load its metadata first", name);
    return r;
}

int ft_conn_get(ft_agent *a, ft_remote *r, int *fd, ft_error *err) {
    for (;;) {
        pthread_mutex_lock(&a->mu);
        int c = r->nidle > 0 ? r->idle[--r->nidle] : -1;
        pthread_mutex_unlock(&a->mu);
        if (c < 0) return ft_tcp_connect(a, r, fd, err);
        char probe;
        ssize_t k = recv(c, &probe, 1, MSG_PEEK | MSG_DONTWAIT);
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) { *fd = c; return FT_OK; }
        close(c); /* closed by the peer (or out of sync) while idle */
    }
}

void ft_conn_put(ft_agent *a, ft_remote *r, int fd, int reusable) {
    if (fd < 0) return;
    pthread_mutex_lock(&a->mu);
    if (reusable && r->nidle < FT_POOL_MAX) {
        r->idle[r->nidle++] = fd;
        fd = -1;
    }
    pthread_mutex_unlock(&a->mu);
    if (fd >= 0) close(fd);
}

/* ---- transfers ---- */

static int resolve_remote(ft_remote *r, const ft_desc *in, ft_desc *out, ft_rregion **rr, size_t n, ft_error *err) {
    for (size_t i = 0; i < n; i++) {
        const ft_desc *d = &in[i];
        ft_rregion *g = NULL;
        for (uint32_t k = 0; k < r->nregions && !g; k++) {
            ft_rregion *c = &r->regions[k];
            if (d->region == FT_REGION_ADDR ? d->offset >= c->base && d->offset - c->base < c->len : c->id == d->region) g = c;
        }
        if (!g) {
            if (d->region == FT_REGION_ADDR)
                return ft_fail(err, FT_EBOUNDS, "remote descriptor %zu: address 0x%llx is not inside memory registered with '%s'",
                               i, (unsigned long long)d->offset, r->name);
            return ft_fail(err, FT_EREGION, "remote descriptor %zu: region %llu is not registered with '%s' (unknown or deregistered)",
                           i, (unsigned long long)d->region, r->name);
        }
        uint64_t off = d->region == FT_REGION_ADDR ? d->offset - g->base : d->offset;
        if (d->length == 0 || d->length > g->len || off > g->len - d->length)
            return ft_fail(err, FT_EBOUNDS, "remote descriptor %zu: [%llu, +%llu) is outside region %llu of '%s' (%llu bytes)", i,
                           (unsigned long long)off, (unsigned long long)d->length, (unsigned long long)g->id, r->name,
                           (unsigned long long)g->len);
        out[i] = (ft_desc){g->id, off, d->length};
        rr[i] = g;
    }
    return FT_OK;
}

static int choose_backend(ft_agent *a, ft_remote *r, ft_rregion **rr, size_t n, ft_error *err) {
    unsigned common = a->backends & r->backends;
    if ((common & FT_BACKEND_SHM) && ft_shm_usable(a, r, rr, n)) return FT_BACKEND_SHM;
    if ((common & FT_BACKEND_UCX) && ft_ucx_usable(r, rr, n)) return FT_BACKEND_UCX;
    if (common & FT_BACKEND_TCP) return FT_BACKEND_TCP;
    ft_fail(err, FT_EUNSUPPORTED,
            "no backend reaches '%s' for these descriptors (local 0x%x, remote 0x%x; shm needs the same host and regions from allocateShared)",
            r->name, a->backends, r->backends);
    return 0;
}

int ft_post(uint64_t handle, int op, const char *remote_name, const ft_desc *local, const ft_desc *remote, size_t n,
            const uint8_t *notif, size_t notif_len, ft_request **out, ft_error *err) {
    if (op != FT_OP_READ && op != FT_OP_WRITE) return ft_fail(err, FT_EINVAL, "unknown operation %d", op);
    if (n == 0 || n > FT_DESC_MAX) return ft_fail(err, FT_EINVAL, "a request needs 1..%u descriptor pairs, got %zu", FT_DESC_MAX, n);
    if (notif_len > FT_NOTIF_MAX) return ft_fail(err, FT_EINVAL, "notification of %zu bytes exceeds %u", notif_len, FT_NOTIF_MAX);
    for (size_t i = 0; i < n; i++) {
        if (local[i].length != remote[i].length)
            return ft_fail(err, FT_EINVAL, "descriptor pair %zu: local length %llu != remote length %llu", i,
                           (unsigned long long)local[i].length, (unsigned long long)remote[i].length);
    }
    ft_agent *a = ft_agent_acquire(handle, err);
    if (!a) return FT_ECLOSED;
    struct ft_request *q = calloc(1, sizeof *q);
    int rc = FT_OK;
    if (!q || !(q->rdesc = calloc(n, sizeof *q->rdesc)) || !(q->rreg = calloc(n, sizeof *q->rreg)) ||
        !(q->lptr = calloc(n, sizeof *q->lptr)) || !(q->lpin = calloc(n, sizeof *q->lpin)) ||
        (notif_len && !(q->notif = malloc(notif_len)))) {
        rc = ft_fail(err, FT_ENOMEM, "out of memory");
    }
    ft_remote *r = NULL;
    if (rc == FT_OK) {
        pthread_condattr_t ca; /* ft_request_wait's deadline is on the monotonic clock */
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_mutex_init(&q->mu, NULL);
        pthread_cond_init(&q->cv, &ca);
        pthread_condattr_destroy(&ca);
        q->refs = 1;
        q->op = op;
        q->n = n;
        q->notif_len = notif_len;
        if (notif_len) memcpy(q->notif, notif, notif_len);
        r = find_remote(a, remote_name, err);
        if (!r) rc = FT_EUNKNOWN_AGENT;
    }
    if (rc == FT_OK) rc = resolve_remote(r, remote, q->rdesc, q->rreg, n, err);
    if (rc == FT_OK && !(q->backend = choose_backend(a, r, q->rreg, n, err))) rc = FT_EUNSUPPORTED;
    if (rc == FT_OK) rc = ft_pin_regions(a, local, n, q->lpin, q->lptr, err);
    if (rc != FT_OK) {
        if (r) ft_remote_unref(a, r);
        if (q && q->refs) ft_request_release(q);
        else if (q) { free(q->rdesc); free(q->rreg); free(q->lptr); free(q->lpin); free(q->notif); free(q); }
        ft_agent_release(a);
        return rc;
    }
    q->remote = r;
    q->refs = 2; /* the caller's and the worker's */
    pthread_mutex_lock(&a->qmu);
    if (a->closing) {
        rc = ft_fail(err, FT_ECLOSED, "agent '%s' is closing", a->name);
    } else {
        if (a->qtail) a->qtail->next = q;
        else a->qhead = q;
        a->qtail = q;
        pthread_cond_signal(&a->qcv);
    }
    pthread_mutex_unlock(&a->qmu);
    if (rc != FT_OK) {
        request_detach(a, q);
        ft_request_release(q);
        ft_request_release(q);
    } else {
        *out = q;
    }
    ft_agent_release(a);
    return rc;
}

int ft_send_notification(uint64_t handle, const char *remote_name, const uint8_t *payload, size_t len, ft_error *err) {
    if (len > FT_NOTIF_MAX) return ft_fail(err, FT_EINVAL, "notification of %zu bytes exceeds %u", len, FT_NOTIF_MAX);
    ft_agent *a = ft_agent_acquire(handle, err);
    if (!a) return FT_ECLOSED;
    ft_remote *r = find_remote(a, remote_name, err);
    int rc = r ? ft_tcp_notify(a, r, payload, len, err) : FT_EUNKNOWN_AGENT;
    if (r) ft_remote_unref(a, r);
    ft_agent_release(a);
    return rc;
}
