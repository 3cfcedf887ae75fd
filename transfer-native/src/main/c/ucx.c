/*
 * The ucx backend (built only when the build finds libucx): one-sided put/get through UCX.
 *
 * Each agent owns one UCP context and worker, guarded by a mutex (thread mode SERIALIZED), and a
 * progress thread that sleeps on the worker's event fd, so that transports which need the target
 * to make progress (tcp, emulated RMA) still complete. Registered regions are mapped with
 * ucp_mem_map; their packed rkeys travel in the metadata with the worker address. Loading a remote
 * agent creates an endpoint and unpacks its rkeys. As with shm, the target validates and pins the
 * descriptors through a lease on the control channel before any byte moves.
 *
 * Inside a JVM, UCX's error-signal handlers (SIGSEGV, SIGBUS, ...) must not stay installed: the JVM
 * takes those signals on purpose (implicit null checks, safepoint polls) and UCX would treat them as
 * crashes. libucs installs them when it is loaded, before any of our code runs; the constructor
 * below hands every one back to the previous handler as soon as this library is loaded. Setting
 * UCX_ERROR_SIGNALS= in the environment avoids even that short window.
 */
#include "ft_impl.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include <ucs/config/global_opts.h>
#include <ucs/debug/debug.h>

typedef struct {
    ucp_context_h ctx;
    ucp_worker_h worker;
    ucp_address_t *addr;
    size_t addr_len;
    pthread_mutex_t mu;
    pthread_t progress;
    int efd;
    int stop;                         /* under mu */
} ucx_agent;

typedef struct {
    ucp_mem_h memh;
    void *rkey;
    size_t rkey_len;
} ucx_region;

typedef struct {
    ucx_agent *owner;
    ucp_ep_h ep;
    int broken;                       /* under owner->mu: the endpoint was force-closed after a failure */
    int failed;                       /* under owner->mu: UCX reported the peer unreachable */
} ucx_remote;

/* Runs inside ucp_worker_progress, so under owner->mu. */
static void on_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status) {
    (void)ep;
    (void)status;
    ((ucx_remote *)arg)->failed = 1;
}

__attribute__((constructor)) static void restore_error_signals(void) {
    for (unsigned i = 0; i < ucs_global_opts.error_signals.count; i++) ucs_debug_disable_signal(ucs_global_opts.error_signals.signals[i]);
}

static int ucx_fail(ft_error *err, const char *what, ucs_status_t st) {
    return ft_fail(err, FT_EUNSUPPORTED, "ucx: %s: %s", what, ucs_status_string(st));
}

static void *progress_main(void *arg) {
    ucx_agent *u = arg;
    for (;;) {
        pthread_mutex_lock(&u->mu);
        if (u->stop) {
            pthread_mutex_unlock(&u->mu);
            return NULL;
        }
        while (ucp_worker_progress(u->worker) != 0) {
        }
        ucs_status_t st = ucp_worker_arm(u->worker);
        pthread_mutex_unlock(&u->mu);
        if (st == UCS_OK) {
            struct pollfd p = {u->efd, POLLIN, 0};
            poll(&p, 1, 100);
        }
    }
}

int ft_ucx_init(ft_agent *a, ft_error *err) {
    ucx_agent *u = calloc(1, sizeof *u);
    if (!u) return ft_fail(err, FT_ENOMEM, "out of memory");
    ucp_config_t *config;
    ucs_status_t st = ucp_config_read(NULL, NULL, &config);
    if (st != UCS_OK) { free(u); return ucx_fail(err, "config", st); }
    ucp_params_t params = {0};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP;
    st = ucp_init(&params, config, &u->ctx);
    ucp_config_release(config);
    if (st != UCS_OK) { free(u); return ucx_fail(err, "init", st); }
    ucp_worker_params_t wp = {0};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
    if ((st = ucp_worker_create(u->ctx, &wp, &u->worker)) != UCS_OK) {
        ucp_cleanup(u->ctx);
        free(u);
        return ucx_fail(err, "worker", st);
    }
    if ((st = ucp_worker_get_address(u->worker, &u->addr, &u->addr_len)) != UCS_OK ||
        (st = ucp_worker_get_efd(u->worker, &u->efd)) != UCS_OK) {
        if (u->addr) ucp_worker_release_address(u->worker, u->addr);
        ucp_worker_destroy(u->worker);
        ucp_cleanup(u->ctx);
        free(u);
        return ucx_fail(err, "worker address", st);
    }
    pthread_mutex_init(&u->mu, NULL);
    if (pthread_create(&u->progress, NULL, progress_main, u) != 0) {
        ucp_worker_release_address(u->worker, u->addr);
        ucp_worker_destroy(u->worker);
        ucp_cleanup(u->ctx);
        pthread_mutex_destroy(&u->mu);
        free(u);
        return ft_fail(err, FT_ENOMEM, "cannot start ucx progress thread");
    }
    a->ucx = u;
    return FT_OK;
}

void ft_ucx_fini(ft_agent *a) {
    ucx_agent *u = a->ucx;
    if (!u) return;
    pthread_mutex_lock(&u->mu);
    u->stop = 1;
    ucp_worker_signal(u->worker);
    pthread_mutex_unlock(&u->mu);
    pthread_join(u->progress, NULL);
    ucp_worker_release_address(u->worker, u->addr);
    ucp_worker_destroy(u->worker);
    ucp_cleanup(u->ctx);
    pthread_mutex_destroy(&u->mu);
    free(u);
    a->ucx = NULL;
}

int ft_ucx_register(ft_agent *a, ft_region *r, ft_error *err) {
    ucx_agent *u = a->ucx;
    if (!u) return FT_OK;
    ucx_region *x = calloc(1, sizeof *x);
    if (!x) return ft_fail(err, FT_ENOMEM, "out of memory");
    ucp_mem_map_params_t mp = {0};
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    mp.address = r->base;
    mp.length = r->len;
    pthread_mutex_lock(&u->mu);
    ucs_status_t st = ucp_mem_map(u->ctx, &mp, &x->memh);
    if (st == UCS_OK && (st = ucp_rkey_pack(u->ctx, x->memh, &x->rkey, &x->rkey_len)) != UCS_OK) ucp_mem_unmap(u->ctx, x->memh);
    pthread_mutex_unlock(&u->mu);
    if (st != UCS_OK) {
        free(x);
        return ucx_fail(err, "mem_map", st);
    }
    r->ucx = x;
    return FT_OK;
}

void ft_ucx_deregister(ft_agent *a, ft_region *r) {
    ucx_agent *u = a->ucx;
    ucx_region *x = r->ucx;
    if (!u || !x) return;
    pthread_mutex_lock(&u->mu);
    ucp_rkey_buffer_release(x->rkey);
    ucp_mem_unmap(u->ctx, x->memh);
    pthread_mutex_unlock(&u->mu);
    free(x);
    r->ucx = NULL;
}

int ft_ucx_worker_address(ft_agent *a, const uint8_t **p, size_t *n) {
    ucx_agent *u = a->ucx;
    *p = u ? (const uint8_t *)u->addr : NULL;
    *n = u ? u->addr_len : 0;
    return 0;
}

int ft_ucx_rkey(ft_region *r, const uint8_t **p, size_t *n) {
    ucx_region *x = r->ucx;
    *p = x ? x->rkey : NULL;
    *n = x ? x->rkey_len : 0;
    return 0;
}

/* Waits for a request under u->mu, progressing the worker; 0 when it completed successfully. */
static ucs_status_t wait_request(ucx_agent *u, void *req, int64_t deadline_ns) {
    if (req == NULL) return UCS_OK;
    if (UCS_PTR_IS_ERR(req)) return UCS_PTR_STATUS(req);
    ucs_status_t st;
    for (;;) {
        st = ucp_request_check_status(req);
        if (st != UCS_INPROGRESS) break;
        ucp_worker_progress(u->worker);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((int64_t)now.tv_sec * 1000000000LL + now.tv_nsec > deadline_ns) {
            st = UCS_ERR_TIMED_OUT;
            break;
        }
    }
    ucp_request_free(req);
    return st;
}

static void close_ep(ucx_agent *u, ucp_ep_h ep, int force) {
    ucp_request_param_t p = {0};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
    void *req = ucp_ep_close_nbx(ep, &p);
    wait_request(u, req, INT64_MAX);
}

/* The endpoint is created lazily, under a lease (see ft_ucx_xfer): connecting to the worker of an
 * agent that no longer exists makes UCX 1.13 abort while it purges the pending wireup. */
void ft_ucx_load_remote(ft_agent *a, ft_remote *r) {
    ucx_agent *u = a->ucx;
    if (!u || !(r->backends & FT_BACKEND_UCX) || !r->ucx_addr) return;
    ucx_remote *x = calloc(1, sizeof *x);
    if (!x) return;
    x->owner = u;
    r->ucx = x;
}

/* Under owner->mu: connects to the remote worker and unpacks every rkey. */
static ucs_status_t connect_ep(ft_remote *r, ucx_remote *x) {
    ucp_ep_params_t ep = {0};
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    ep.address = (const ucp_address_t *)r->ucx_addr;
    ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    ep.err_handler.cb = on_ep_error;
    ep.err_handler.arg = x;
    ucs_status_t st = ucp_ep_create(x->owner->worker, &ep, &x->ep);
    if (st != UCS_OK) {
        x->ep = NULL;
        x->broken = 1;
        return st;
    }
    for (uint32_t i = 0; i < r->nregions; i++) {
        ucp_rkey_h rkey;
        if (r->regions[i].rkey && ucp_ep_rkey_unpack(x->ep, r->regions[i].rkey, &rkey) == UCS_OK) r->regions[i].ucx = rkey;
    }
    return UCS_OK;
}

/* Under owner->mu: destroys the rkeys, then the endpoint (forced: cancels what is in flight). */
static void drop_endpoint(ft_remote *r, ucx_remote *x) {
    for (uint32_t i = 0; i < r->nregions; i++) {
        if (r->regions[i].ucx) ucp_rkey_destroy(r->regions[i].ucx);
        r->regions[i].ucx = NULL;
    }
    if (x->ep) close_ep(x->owner, x->ep, 1);
    x->ep = NULL;
    x->broken = 1;
}

void ft_ucx_unload_remote(ft_remote *r) {
    ucx_remote *x = r->ucx;
    if (!x) return;
    pthread_mutex_lock(&x->owner->mu);
    if (x->ep) drop_endpoint(r, x);
    pthread_mutex_unlock(&x->owner->mu);
    free(x);
    r->ucx = NULL;
}

int ft_ucx_usable(ft_remote *r, ft_rregion **rr, size_t n) {
    ucx_remote *x = r->ucx;
    if (!x || x->broken) return 0; /* racy read: ft_ucx_xfer checks again under the lock */
    for (size_t i = 0; i < n; i++)
        if (!rr[i]->rkey) return 0;
    return 1;
}

int ft_ucx_xfer(ft_agent *a, struct ft_request *q, ft_error *err) {
    ucx_agent *u = a->ucx;
    ucx_remote *x = q->remote->ucx;
    int fd;
    uint64_t lease;
    int rc = ft_lease_acquire(a, q->remote, q->rdesc, q->n, &fd, &lease, err);
    if (rc) return rc;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t deadline = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec + (int64_t)a->io_timeout_ms * 1000000LL;
    ucs_status_t st = UCS_OK;
    pthread_mutex_lock(&u->mu);
    if (x->failed && !x->broken) drop_endpoint(q->remote, x);
    if (x->broken) st = UCS_ERR_ENDPOINT_TIMEOUT; /* an earlier failure closed it; reloading the metadata makes a new one */
    else if (!x->ep) st = connect_ep(q->remote, x); /* the lease proved the remote worker is this instance's */
    for (size_t i = 0; i < q->n && st == UCS_OK; i++)
        if (!q->rreg[i]->ucx) st = UCS_ERR_INVALID_PARAM; /* rkey that did not unpack */
    for (size_t i = 0; i < q->n && st == UCS_OK; i++) {
        ucp_request_param_t p = {0};
        uint64_t raddr = q->rreg[i]->base + q->rdesc[i].offset;
        void *req = q->op == FT_OP_WRITE ? ucp_put_nbx(x->ep, q->lptr[i], q->rdesc[i].length, raddr, q->rreg[i]->ucx, &p)
                                         : ucp_get_nbx(x->ep, q->lptr[i], q->rdesc[i].length, raddr, q->rreg[i]->ucx, &p);
        if (UCS_PTR_IS_ERR(req)) st = UCS_PTR_STATUS(req);
        else if (req) ucp_request_free(req); /* completion is awaited by the flush below */
    }
    if (!x->broken) {
        ucp_request_param_t fp = {0}; /* remote completion of every put/get above */
        ucs_status_t fst = wait_request(u, ucp_ep_flush_nbx(x->ep, &fp), deadline);
        if (st == UCS_OK) st = fst;
        if (fst != UCS_OK) drop_endpoint(q->remote, x); /* cancel whatever is in flight before the pins drop */
    }
    pthread_mutex_unlock(&u->mu);
    if (st != UCS_OK) {
        ft_conn_put(a, q->remote, fd, 0);
        return ft_fail(err, st == UCS_ERR_TIMED_OUT ? FT_ETIMEOUT : FT_EIO, "%s", ucs_status_string(st));
    }
    return ft_lease_release(a, q->remote, fd, lease, q->notif, q->notif_len, err);
}
