/*
 * Agent core: the agent registry, agent lifecycle, registered regions and their pins, this agent's
 * metadata, received notifications. Remote agents and requests live in xfer.c; backends (tcp.c,
 * shm.c, ucx.c) move the bytes.
 *
 * The registry is the library's only global mutable state: it maps handles to live agents so that
 * a stale handle fails cleanly, and it counts callers inside each agent so that ft_agent_destroy
 * waits for them before freeing anything.
 */
#include "ft_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    uint64_t handle;
    ft_agent *agent;
    int users;   /* callers inside the agent */
    int closing; /* ft_agent_destroy is waiting for them */
} ft_slot;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    ft_slot *slots;
    size_t n, cap;
    uint64_t next_handle;
} registry = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0, 1};

ft_agent *ft_agent_acquire(uint64_t handle, ft_error *err) {
    ft_agent *a = NULL;
    pthread_mutex_lock(&registry.mu);
    for (size_t i = 0; i < registry.n; i++) {
        if (registry.slots[i].handle == handle && !registry.slots[i].closing) {
            registry.slots[i].users++;
            a = registry.slots[i].agent;
            break;
        }
    }
    pthread_mutex_unlock(&registry.mu);
    if (!a) ft_fail(err, FT_ECLOSED, "agent handle %llu is closed", (unsigned long long)handle);
    return a;
}

void ft_agent_release(ft_agent *a) {
    pthread_mutex_lock(&registry.mu);
    for (size_t i = 0; i < registry.n; i++) {
        if (registry.slots[i].agent == a) {
            if (--registry.slots[i].users == 0) pthread_cond_broadcast(&registry.cv);
            break;
        }
    }
    pthread_mutex_unlock(&registry.mu);
}

unsigned ft_compiled_backends(void) {
#ifdef FT_HAVE_UCX
    return FT_BACKEND_TCP | FT_BACKEND_SHM | FT_BACKEND_UCX;
#else
    return FT_BACKEND_TCP | FT_BACKEND_SHM;
#endif
}

const char *ft_code_name(int code) {
    static const char *names[] = {"OK", "INVALID_ARGUMENT", "UNKNOWN_AGENT", "OUT_OF_BOUNDS", "UNKNOWN_REGION",
                                  "UNSUPPORTED", "IO", "TIMEOUT", "CANCELLED", "CLOSED", "NO_MEMORY", "PROTOCOL"};
    return code >= 0 && code <= FT_EPROTO ? names[code] : "UNKNOWN";
}

/* ---- agents ---- */

static void agent_free(ft_agent *a) {
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->qmu);
    pthread_cond_destroy(&a->qcv);
    free(a->workers);
    free(a);
}

static void agent_teardown(ft_agent *a) {
    pthread_mutex_lock(&a->qmu);
    a->closing = 1;
    pthread_cond_broadcast(&a->qcv);
    pthread_mutex_unlock(&a->qmu);
    for (int i = 0; i < a->nworkers; i++) pthread_join(a->workers[i], NULL);
    ft_tcp_stop(a);
    while (a->regions) {
        ft_region *r = a->regions;
        a->regions = r->next;
        ft_ucx_deregister(a, r);
        if (r->shared) ft_shm_free(r);
        free(r);
    }
    while (a->remotes) {
        ft_remote *r = a->remotes;
        a->remotes = r->next;
        ft_remote_unref(a, r);
    }
    while (a->nhead) {
        ft_notif_node *n = a->nhead;
        a->nhead = n->next;
        free(n->n.payload);
        free(n);
    }
    ft_ucx_fini(a);
    agent_free(a);
}

int ft_agent_create(const char *name, const ft_config *cfg, uint64_t *out, ft_error *err) {
    ft_config defaults = {0};
    if (!cfg) cfg = &defaults;
    if (!name || !*name || strlen(name) >= FT_NAME_MAX)
        return ft_fail(err, FT_EINVAL, "agent name must have 1..%d bytes", FT_NAME_MAX - 1);
    unsigned wanted = cfg->backends ? cfg->backends : FT_BACKEND_TCP | FT_BACKEND_SHM;
    if (wanted & ~ft_compiled_backends())
        return ft_fail(err, FT_EUNSUPPORTED, "backends 0x%x requested, this build has 0x%x", wanted, ft_compiled_backends());
    ft_agent *a = calloc(1, sizeof *a);
    if (!a) return ft_fail(err, FT_ENOMEM, "out of memory");
    snprintf(a->name, sizeof a->name, "%s", name);
    if (getrandom(&a->instance, sizeof a->instance, 0) != sizeof a->instance) a->instance = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
    ft_host_id(a->host_id, sizeof a->host_id);
    a->backends = wanted;
    a->io_timeout_ms = cfg->io_timeout_ms > 0 ? cfg->io_timeout_ms : 30000;
    a->next_region = 1;
    a->listen_fd = -1;
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    pthread_mutex_init(&a->qmu, NULL);
    pthread_cond_init(&a->qcv, NULL);
    int rc = FT_OK;
    if (a->backends & FT_BACKEND_SHM) ft_shm_sweep();
    if (a->backends & FT_BACKEND_UCX) {
        ft_error uerr = {0};
        if (ft_ucx_init(a, &uerr) != FT_OK) {
            /* UCX compiled in but unusable here (no transports): run without it, as the query will say */
            a->backends &= ~(unsigned)FT_BACKEND_UCX;
            if (wanted == FT_BACKEND_UCX) rc = ft_fail(err, uerr.code, "%s", uerr.msg);
        }
    }
    if (rc == FT_OK) rc = ft_tcp_start(a, cfg->listen_host ? cfg->listen_host : "127.0.0.1", cfg->listen_port, err);
    int nworkers = cfg->worker_threads > 0 ? cfg->worker_threads : 2;
    if (rc == FT_OK && !(a->workers = calloc((size_t)nworkers, sizeof *a->workers))) rc = ft_fail(err, FT_ENOMEM, "out of memory");
    for (int i = 0; rc == FT_OK && i < nworkers; i++) {
        if (pthread_create(&a->workers[i], NULL, ft_worker_main, a) != 0) rc = ft_fail(err, FT_ENOMEM, "cannot start worker thread");
        else a->nworkers++;
    }
    if (rc == FT_OK) {
        pthread_mutex_lock(&registry.mu);
        if (registry.n == registry.cap) {
            size_t cap = registry.cap ? registry.cap * 2 : 8;
            ft_slot *s = realloc(registry.slots, cap * sizeof *s);
            if (s) { registry.slots = s; registry.cap = cap; }
        }
        if (registry.n < registry.cap) {
            a->handle = registry.next_handle++;
            registry.slots[registry.n++] = (ft_slot){a->handle, a, 0, 0};
            *out = a->handle;
        } else {
            rc = ft_fail(err, FT_ENOMEM, "out of memory");
        }
        pthread_mutex_unlock(&registry.mu);
    }
    if (rc != FT_OK) agent_teardown(a);
    return rc;
}

void ft_agent_destroy(uint64_t handle) {
    ft_agent *a = NULL;
    pthread_mutex_lock(&registry.mu);
    for (;;) { /* the slot array may move while we wait: look the handle up again each time */
        size_t i = 0;
        while (i < registry.n && registry.slots[i].handle != handle) i++;
        if (i == registry.n) break; /* unknown, or another destroy got it first */
        registry.slots[i].closing = 1; /* no new callers */
        if (registry.slots[i].users > 0) {
            pthread_cond_wait(&registry.cv, &registry.mu);
            continue;
        }
        a = registry.slots[i].agent;
        registry.slots[i] = registry.slots[--registry.n];
        break;
    }
    if (registry.n == 0) {
        free(registry.slots);
        registry.slots = NULL;
        registry.cap = 0;
    }
    pthread_mutex_unlock(&registry.mu);
    if (a) agent_teardown(a);
}

int ft_agent_backends(uint64_t handle, unsigned *backends, ft_error *err) {
    ft_agent *a = ft_agent_acquire(handle, err);
    if (!a) return FT_ECLOSED;
    *backends = a->backends;
    ft_agent_release(a);
    return FT_OK;
}

/* ---- regions ---- */

static int add_region(ft_agent *a, ft_region *r, uint64_t *id, ft_error *err) {
    pthread_mutex_lock(&a->mu);
    r->id = a->next_region++;
    pthread_mutex_unlock(&a->mu);
    int rc = r->shared ? ft_shm_alloc(a, r, err) : FT_OK;
    if (rc == FT_OK && (a->backends & FT_BACKEND_UCX)) rc = ft_ucx_register(a, r, err);
    if (rc != FT_OK) {
        if (r->shared && r->base) ft_shm_free(r);
        free(r);
        return rc;
    }
    pthread_mutex_lock(&a->mu);
    r->next = a->regions;
    a->regions = r;
    pthread_mutex_unlock(&a->mu);
    *id = r->id;
    return FT_OK;
}

int ft_register(uint64_t handle, void *addr, uint64_t len, int kind, uint64_t *id, ft_error *err) {
    if (kind == FT_MEM_VRAM)
        return ft_fail(err, FT_EUNSUPPORTED, "VRAM registration needs a CUDA build of the transfer library; this build moves DRAM only");
    if (kind != FT_MEM_DRAM) return ft_fail(err, FT_EINVAL, "unknown memory kind %d", kind);
    if (!addr || len == 0 || (uintptr_t)addr + len < (uintptr_t)addr)
        return ft_fail(err, FT_EINVAL, "region must be a non-null address and a positive length");
    ft_agent *a = ft_agent_acquire(handle, err);
    if (!a) return FT_ECLOSED;
    ft_region *r = calloc(1, sizeof *r);
    int rc;
    if (!r) {
        rc = ft_fail(err, FT_ENOMEM, "out of memory");
    } else {
        r->base = addr;
        r->len = len;
        r->kind = kind;
        rc = add_region(a, r, id, err);
    }
    ft_agent_release(a);
    return rc;
}

int ft_alloc_shared(uint64_t handle, uint64_t len, uint64_t *id, void **addr, ft_error *err) {
    if (len == 0 || len > (1ULL << 46)) return ft_fail(err, FT_EINVAL, "shared allocation of %llu bytes", (unsigned long long)len);
    ft_agent *a = ft_agent_acquire(handle, err);
    if (!a) return FT_ECLOSED;
    ft_region *r = calloc(1, sizeof *r);
    int rc;
    if (!r) {
        rc = ft_fail(err, FT_ENOMEM, "out of memory");
    } else {
        r->len = len;
        r->kind = FT_MEM_DRAM;
        r->shared = 1;
        rc = add_region(a, r, id, err);
        if (rc == FT_OK) *addr = r->base;
    }
    ft_agent_release(a);
    return rc;
}

int ft_deregister(uint64_t handle, uint64_t id, ft_error *err) {
    ft_agent *a = ft_agent_acquire(handle, err);
    if (!a) return FT_ECLOSED;
    pthread_mutex_lock(&a->mu);
    ft_region **link = &a->regions;
    while (*link && (*link)->id != id) link = &(*link)->next;
    ft_region *r = *link;
    if (!r || r->dead) {
        pthread_mutex_unlock(&a->mu);
        ft_agent_release(a);
        return ft_fail(err, FT_EREGION, "region %llu is not registered with agent '%s'", (unsigned long long)id, a->name);
    }
    r->dead = 1;
    while (r->pins > 0) pthread_cond_wait(&a->cv, &a->mu);
    link = &a->regions; /* the list may have changed while we waited */
    while (*link != r) link = &(*link)->next;
    *link = r->next;
    pthread_mutex_unlock(&a->mu);
    ft_ucx_deregister(a, r);
    if (r->shared) ft_shm_free(r);
    free(r);
    ft_agent_release(a);
    return FT_OK;
}

static ft_region *find_region(ft_agent *a, const ft_desc *d, ft_error *err) {
    for (ft_region *r = a->regions; r; r = r->next) {
        if (d->region == FT_REGION_ADDR) {
            uint64_t base = (uint64_t)(uintptr_t)r->base;
            if (d->offset >= base && d->length <= r->len && d->offset - base <= r->len - d->length) {
                if (r->dead) break;
                return r;
            }
        } else if (r->id == d->region) {
            if (r->dead) break;
            if (d->length <= r->len && d->offset <= r->len - d->length) return r;
            ft_fail(err, FT_EBOUNDS, "[%llu, +%llu) is outside region %llu of '%s' (%llu bytes)",
                    (unsigned long long)d->offset, (unsigned long long)d->length, (unsigned long long)r->id, a->name,
                    (unsigned long long)r->len);
            return NULL;
        }
    }
    if (d->region == FT_REGION_ADDR)
        ft_fail(err, FT_EBOUNDS, "address range [0x%llx, +%llu) is not inside memory registered with '%s'",
                (unsigned long long)d->offset, (unsigned long long)d->length, a->name);
    else
        ft_fail(err, FT_EREGION, "region %llu is not registered with '%s' (unknown or deregistered)",
                (unsigned long long)d->region, a->name);
    return NULL;
}

int ft_pin_regions(ft_agent *a, const ft_desc *d, size_t n, ft_region **pins, uint8_t **ptrs, ft_error *err) {
    pthread_mutex_lock(&a->mu);
    size_t i = 0;
    for (; i < n; i++) {
        if (d[i].length == 0) { ft_fail(err, FT_EINVAL, "descriptor %zu has length 0", i); break; }
        ft_region *r = find_region(a, &d[i], err);
        if (!r) break;
        uint64_t off = d[i].region == FT_REGION_ADDR ? d[i].offset - (uint64_t)(uintptr_t)r->base : d[i].offset;
        pins[i] = r;
        if (ptrs) ptrs[i] = r->base + off;
    }
    if (i == n) {
        for (size_t j = 0; j < n; j++) pins[j]->pins++;
    }
    pthread_mutex_unlock(&a->mu);
    return i == n ? FT_OK : err ? err->code : FT_EINVAL;
}

void ft_unpin_regions(ft_agent *a, ft_region **pins, size_t n) {
    if (!pins || n == 0) return;
    pthread_mutex_lock(&a->mu);
    for (size_t i = 0; i < n; i++) pins[i]->pins--;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

/* ---- own metadata ---- */

int ft_local_metadata(uint64_t handle, uint8_t **buf, size_t *len, ft_error *err) {
    ft_agent *a = ft_agent_acquire(handle, err);
    if (!a) return FT_ECLOSED;
    ft_buf b = {0};
    pthread_mutex_lock(&a->mu);
    int rc = ft_meta_encode(a, &b, err);
    pthread_mutex_unlock(&a->mu);
    if (rc == FT_OK) {
        *buf = b.p;
        *len = b.len;
    } else {
        free(b.p);
    }
    ft_agent_release(a);
    return rc;
}

/* ---- notifications ---- */

int ft_notif_push(ft_agent *a, const char *from, const uint8_t *payload, size_t len, ft_error *err) {
    ft_notif_node *n = calloc(1, sizeof *n);
    if (!n || (len && !(n->n.payload = malloc(len)))) {
        free(n);
        return ft_fail(err, FT_ENOMEM, "out of memory");
    }
    snprintf(n->n.agent, sizeof n->n.agent, "%s", from);
    if (len) memcpy(n->n.payload, payload, len);
    n->n.length = len;
    pthread_mutex_lock(&a->mu);
    int full = a->ncount >= FT_NOTIF_QUEUE_MAX;
    if (!full) {
        if (a->ntail) a->ntail->next = n;
        else a->nhead = n;
        a->ntail = n;
        a->ncount++;
    }
    pthread_mutex_unlock(&a->mu);
    if (full) {
        free(n->n.payload);
        free(n);
        return ft_fail(err, FT_ENOMEM, "notification queue of '%s' is full (%d)", a->name, FT_NOTIF_QUEUE_MAX);
    }
    return FT_OK;
}

int ft_poll_notifications(uint64_t handle, ft_notif **out, size_t *count, ft_error *err) {
    ft_agent *a = ft_agent_acquire(handle, err);
    if (!a) return FT_ECLOSED;
    pthread_mutex_lock(&a->mu);
    ft_notif_node *head = a->nhead;
    size_t n = a->ncount;
    a->nhead = a->ntail = NULL;
    a->ncount = 0;
    pthread_mutex_unlock(&a->mu);
    int rc = FT_OK;
    ft_notif *arr = n ? calloc(n, sizeof *arr) : NULL;
    if (n && !arr) rc = ft_fail(err, FT_ENOMEM, "out of memory");
    size_t i = 0;
    while (head) {
        ft_notif_node *next = head->next;
        if (arr) arr[i++] = head->n;
        else free(head->n.payload);
        free(head);
        head = next;
    }
    *out = arr;
    *count = arr ? n : 0;
    ft_agent_release(a);
    return rc;
}

void ft_notifs_free(ft_notif *notifs, size_t count) {
    for (size_t i = 0; i < count; i++) free(notifs[i].payload);
    free(notifs);
}

int64_t ft_bench_memcpy(void *dst, const void *src, uint64_t block, uint64_t total, int iters) {
    struct timespec t0, t1;
    if (block == 0) return -1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int it = 0; it < iters; it++) {
        for (uint64_t off = 0; off + block <= total; off += block) memcpy((uint8_t *)dst + off, (const uint8_t *)src + off, block);
        __asm__ __volatile__("" ::: "memory");
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
}
