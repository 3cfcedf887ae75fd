/*
 * Flotilla KV transfer library: public C API (used by the JNI binding and the C test driver).
 *
 * Shape follows NVIDIA NIXL's agent: an agent registers memory, publishes metadata describing
 * itself (name, endpoints, registered regions), loads the metadata of remote agents, and posts
 * asynchronous READ/WRITE requests made of (local descriptor, remote descriptor) pairs.
 *
 * Contracts:
 *  - Agents are named by a 64-bit handle, never by pointer: a stale handle is reported as
 *    FT_ECLOSED instead of touching freed memory. Every function is thread-safe.
 *  - Every descriptor is validated against registered memory on the initiator before a request is
 *    queued, and again by the target before it touches its memory; a request that fails either
 *    check moves no byte.
 *  - ft_deregister returns only after every in-flight transfer that touches the region is finished;
 *    afterwards no byte moves in or out of that memory.
 *  - Functions returning int return FT_OK (0) or an ft_code and fill *err (which may be NULL).
 */
#ifndef FT_H
#define FT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FT_ABI_VERSION 1

enum ft_code {
    FT_OK = 0,
    FT_EINVAL = 1,        /* malformed argument (lengths, counts, kinds) */
    FT_EUNKNOWN_AGENT = 2,/* remote agent not loaded, or a target that is not the addressed agent */
    FT_EBOUNDS = 3,       /* descriptor outside every registered region */
    FT_EREGION = 4,       /* region id unknown or deregistered */
    FT_EUNSUPPORTED = 5,  /* backend or memory kind not available */
    FT_EIO = 6,           /* socket / mapping failure */
    FT_ETIMEOUT = 7,
    FT_ECANCELLED = 8,
    FT_ECLOSED = 9,       /* agent closed (or handle stale) */
    FT_ENOMEM = 10,
    FT_EPROTO = 11        /* peer spoke a malformed or foreign protocol */
};

/* Backends, as bits; the order of preference when several apply is SHM, UCX, TCP. */
enum ft_backend { FT_BACKEND_TCP = 1, FT_BACKEND_SHM = 2, FT_BACKEND_UCX = 4 };

enum ft_mem_kind { FT_MEM_DRAM = 0, FT_MEM_VRAM = 1 };
enum ft_op { FT_OP_READ = 1, FT_OP_WRITE = 2 };
enum ft_status { FT_PENDING = 0, FT_DONE = 1, FT_ERROR = 2 };

#define FT_NAME_MAX 128
#define FT_MSG_MAX 256
#define FT_NOTIF_MAX (1u << 20)
#define FT_DESC_MAX (1u << 20)

typedef struct {
    int code;
    char msg[FT_MSG_MAX];
} ft_error;

typedef struct {
    unsigned backends;       /* FT_BACKEND_* bits to enable; 0 = tcp + shm (ucx only on request: it pays off with RDMA NICs) */
    const char *listen_host; /* address the control/tcp listener binds and advertises; NULL = 127.0.0.1 */
    int listen_port;         /* 0 = ephemeral */
    int worker_threads;      /* threads executing requests; <= 0 = 2 */
    int io_timeout_ms;       /* send/receive timeout on outgoing connections; <= 0 = 30000 */
} ft_config;

/* region == FT_REGION_ADDR: offset is an absolute address inside some registered region. */
#define FT_REGION_ADDR 0
typedef struct {
    uint64_t region;
    uint64_t offset;
    uint64_t length;
} ft_desc;

typedef struct {
    char agent[FT_NAME_MAX];
    uint8_t *payload;
    size_t length;
} ft_notif;

typedef struct ft_request ft_request;

/* Backends compiled into this build (FT_BACKEND_* bits). UCX is present only if the build found libucx. */
unsigned ft_compiled_backends(void);

int ft_agent_create(const char *name, const ft_config *cfg, uint64_t *agent, ft_error *err);
/* Fails pending requests with FT_ECLOSED, stops threads, unmaps and unlinks shared memory. */
void ft_agent_destroy(uint64_t agent);
/* Backends this agent enabled (a subset of its configuration: UCX drops out if it cannot start). */
int ft_agent_backends(uint64_t agent, unsigned *backends, ft_error *err);

/* Registers caller-owned memory; the caller keeps it alive until ft_deregister returns. */
int ft_register(uint64_t agent, void *addr, uint64_t len, int kind, uint64_t *region, ft_error *err);
/* Allocates len bytes in POSIX shared memory, zeroed and registered; the only memory the shm backend can reach. */
int ft_alloc_shared(uint64_t agent, uint64_t len, uint64_t *region, void **addr, ft_error *err);
int ft_deregister(uint64_t agent, uint64_t region, ft_error *err);

/* Serialised metadata; the caller frees *buf with free(). */
int ft_local_metadata(uint64_t agent, uint8_t **buf, size_t *len, ft_error *err);
/* Loads (or replaces) a remote agent's metadata and copies its name into name[name_cap]. */
int ft_load_remote(uint64_t agent, const uint8_t *buf, size_t len, char *name, size_t name_cap, ft_error *err);
int ft_invalidate_remote(uint64_t agent, const char *name, ft_error *err);

/*
 * Posts a transfer of n descriptor pairs: READ copies remote[i] into local[i], WRITE local[i] into
 * remote[i]; local[i].length must equal remote[i].length. The notification (may be NULL/0) reaches
 * the target's queue before the request reports FT_DONE. On FT_OK *req holds one reference that the
 * caller drops with ft_request_release.
 */
int ft_post(uint64_t agent, int op, const char *remote_agent, const ft_desc *local, const ft_desc *remote,
            size_t n, const uint8_t *notif, size_t notif_len, ft_request **req, ft_error *err);

int ft_request_status(ft_request *req, ft_error *err);
/* Waits up to timeout_ns (< 0 = forever) and returns the status then. */
int ft_request_wait(ft_request *req, int64_t timeout_ns, ft_error *err);
/* Returns 1 if the request had not started and now never will (status FT_ERROR, FT_ECANCELLED). */
int ft_request_cancel(ft_request *req);
/* The backend chosen for the request (one FT_BACKEND_* bit). */
int ft_request_backend(ft_request *req);
void ft_request_release(ft_request *req);

int ft_send_notification(uint64_t agent, const char *remote_agent, const uint8_t *payload, size_t len,
                         ft_error *err);
/* Takes every queued notification, oldest first; free the array with ft_notifs_free. */
int ft_poll_notifications(uint64_t agent, ft_notif **notifs, size_t *count, ft_error *err);
void ft_notifs_free(ft_notif *notifs, size_t count);

/* Benchmark helper: nanoseconds to copy total bytes from src to dst in block-sized memcpy calls, iters times. */
int64_t ft_bench_memcpy(void *dst, const void *src, uint64_t block, uint64_t total, int iters);

const char *ft_code_name(int code);

#ifdef __cplusplus
}
#endif
#endif
