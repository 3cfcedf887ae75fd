/*
 * Internals shared by the agent core (agent.c, xfer.c), the wire codec (wire.c) and the backends
 * (tcp.c, shm.c, ucx.c). Not installed; only the library and its test driver include it.
 *
 * Locking: agent->mu guards regions (pins, dead), remotes (refs, idle connection pools),
 * notifications and server connections. agent->qmu guards the request queue. A request's own mu
 * guards its status. Never take agent->mu while holding a request's mu.
 */
#ifndef FT_IMPL_H
#define FT_IMPL_H

#include "ft.h"
#include <pthread.h>
#include <stdarg.h>

#define FT_MAGIC_META 0x4D544C46u  /* "FLTM" little-endian */
#define FT_MAGIC_HELLO 0x48544C46u /* "FLTH" */
#define FT_MAGIC_REQ 0x52544C46u   /* "FLTR" */
#define FT_MAGIC_RESP 0x41544C46u  /* "FLTA" */
#define FT_WIRE_VERSION 1

/* Operations on the control/tcp connection. READ/WRITE carry bytes; LEASE/RELEASE bracket a
 * one-sided (shm, ucx) transfer so that the target validates and pins what the initiator touches. */
enum ft_wire_op { FT_WOP_READ = 1, FT_WOP_WRITE = 2, FT_WOP_NOTIF = 3, FT_WOP_LEASE = 4, FT_WOP_RELEASE = 5 };
#define FT_WFLAG_ACK 1 /* RELEASE: answer once the notification is queued */

#define FT_REQ_HDR_LEN 32
#define FT_RESP_HDR_LEN 24
#define FT_DESC_WIRE_LEN 24
#define FT_POOL_MAX 8
#define FT_HOST_ID_MAX 160
#define FT_SHM_NAME_MAX 64
#define FT_NOTIF_QUEUE_MAX 65536

typedef struct ft_region {
    uint64_t id;
    uint8_t *base;
    uint64_t len;
    int kind;
    int shared;                       /* allocated by ft_alloc_shared: base maps shm_name */
    char shm_name[FT_SHM_NAME_MAX];
    int pins;                         /* transfers in flight that touch this region */
    int dead;                         /* deregistration started: nothing new may pin it */
    void *ucx;                        /* ucx.c: memory handle + packed rkey */
    struct ft_region *next;
} ft_region;

typedef struct ft_rregion {           /* a remote agent's region, as its metadata says */
    uint64_t id, base, len;
    int kind;
    int shared;
    char shm_name[FT_SHM_NAME_MAX];
    uint8_t *rkey;                    /* packed UCX rkey, or NULL */
    uint32_t rkey_len;
    uint8_t *map;                     /* shm.c: this process's mapping of the segment, or NULL */
    uint64_t map_len;
    void *ucx;                        /* ucx.c: unpacked rkey */
} ft_rregion;

typedef struct ft_remote {
    char name[FT_NAME_MAX];
    uint64_t instance;                /* random per agent start: a restarted peer is another agent */
    char host_id[FT_HOST_ID_MAX];
    unsigned backends;
    char tcp_host[64];
    int tcp_port;
    uint8_t *ucx_addr;
    uint32_t ucx_addr_len;
    ft_rregion *regions;
    uint32_t nregions;
    void *ucx;                        /* ucx.c: endpoint */
    int refs;                         /* the agent's table holds one; each request using it one */
    int idle[FT_POOL_MAX];            /* pooled connections, each past its hello */
    int nidle;
    struct ft_remote *next;
} ft_remote;

typedef struct ft_notif_node {
    ft_notif n;
    struct ft_notif_node *next;
} ft_notif_node;

typedef struct ft_conn {              /* one accepted connection, served by its own thread */
    int fd;
    pthread_t thread;
    int finished;
    struct ft_agent *agent;
    struct ft_conn *next;
} ft_conn;

typedef struct ft_agent {
    uint64_t handle;
    char name[FT_NAME_MAX];
    uint64_t instance;
    char host_id[FT_HOST_ID_MAX];
    unsigned backends;
    int io_timeout_ms;

    pthread_mutex_t mu;
    pthread_cond_t cv;                /* signalled when a pin is dropped */
    ft_region *regions;
    uint64_t next_region;             /* ids are never reused */
    ft_remote *remotes;
    ft_notif_node *nhead, *ntail;
    size_t ncount;
    ft_conn *conns;

    pthread_mutex_t qmu;
    pthread_cond_t qcv;
    struct ft_request *qhead, *qtail;
    int closing;
    pthread_t *workers;
    int nworkers;

    int listen_fd;
    char listen_host[64];
    int listen_port;
    pthread_t listener;
    int listener_started;

    void *ucx;                        /* ucx.c: context + worker + progress thread */
} ft_agent;

struct ft_request {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs;
    int status;
    int started;
    int op;
    int backend;
    ft_error err;
    ft_remote *remote;                /* referenced until the request finishes */
    size_t n;
    ft_desc *rdesc;                   /* remote descriptors, region ids resolved */
    ft_rregion **rreg;
    uint8_t **lptr;                   /* local addresses, validated */
    ft_region **lpin;                 /* local regions pinned for the request */
    uint8_t *notif;
    size_t notif_len;
    struct ft_request *next;
};

/* errors */
int ft_fail(ft_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* agent.c: registry (a caller inside an agent holds it from acquire to release), regions, notifications */
ft_agent *ft_agent_acquire(uint64_t handle, ft_error *err);
void ft_agent_release(ft_agent *a);
int ft_pin_regions(ft_agent *a, const ft_desc *d, size_t n, ft_region **pins, uint8_t **ptrs, ft_error *err);
void ft_unpin_regions(ft_agent *a, ft_region **pins, size_t n);
int ft_notif_push(ft_agent *a, const char *from, const uint8_t *payload, size_t len, ft_error *err);

/* xfer.c: remotes, connection pool, request workers */
void *ft_worker_main(void *agent);
void ft_remote_unref(ft_agent *a, ft_remote *r);
int ft_conn_get(ft_agent *a, ft_remote *r, int *fd, ft_error *err);
void ft_conn_put(ft_agent *a, ft_remote *r, int fd, int reusable);

/* wire.c: byte buffers, metadata codec, frames, sockets */
typedef struct {
    uint8_t *p;
    size_t len, cap;
    int oom;
} ft_buf;
void ft_buf_u8(ft_buf *b, uint8_t v);
void ft_buf_u16(ft_buf *b, uint16_t v);
void ft_buf_u32(ft_buf *b, uint32_t v);
void ft_buf_u64(ft_buf *b, uint64_t v);
void ft_buf_bytes(ft_buf *b, const void *p, size_t n);
void ft_buf_str16(ft_buf *b, const char *s);

typedef struct {
    const uint8_t *p;
    size_t len, pos;
    int bad;                          /* set on any read past the end */
} ft_rd;
uint8_t ft_rd_u8(ft_rd *r);
uint16_t ft_rd_u16(ft_rd *r);
uint32_t ft_rd_u32(ft_rd *r);
uint64_t ft_rd_u64(ft_rd *r);
const uint8_t *ft_rd_bytes(ft_rd *r, size_t n);
int ft_rd_str16(ft_rd *r, char *dst, size_t cap); /* 0, or -1 when too long or truncated */

void ft_put_u32(uint8_t *p, uint32_t v);
void ft_put_u64(uint8_t *p, uint64_t v);
uint32_t ft_get_u32(const uint8_t *p);
uint64_t ft_get_u64(const uint8_t *p);

int ft_meta_encode(ft_agent *a, ft_buf *out, ft_error *err);
/* Decodes into a fresh remote (refs = 1, no mapping, no connections); frees it on failure. */
int ft_meta_decode(const uint8_t *buf, size_t len, ft_remote **out, ft_error *err);
void ft_remote_free_fields(ft_remote *r);

int ft_send_all(int fd, const void *p, size_t n, ft_error *err);
int ft_recv_all(int fd, void *p, size_t n, ft_error *err);
int ft_drain(int fd, uint64_t n, ft_error *err);
int ft_send_request(int fd, int op, int flags, uint64_t lease, const ft_desc *d, size_t n,
                    const uint8_t *notif, size_t notif_len, int more, ft_error *err);
/* Reads one response; returns the peer's code (FT_OK or an error carried in *err) or a local I/O code. */
int ft_recv_response(int fd, uint64_t *lease, ft_error *err);
int ft_send_response(int fd, int code, uint64_t lease, const char *msg);
void ft_set_timeouts(int fd, int ms);

/* tcp.c: the listener (control channel for every backend) and the tcp data backend */
int ft_tcp_start(ft_agent *a, const char *host, int port, ft_error *err);
void ft_tcp_stop(ft_agent *a);
int ft_tcp_connect(ft_agent *a, ft_remote *r, int *fd, ft_error *err);
int ft_tcp_xfer(ft_agent *a, struct ft_request *req, ft_error *err);
int ft_tcp_notify(ft_agent *a, ft_remote *r, const uint8_t *p, size_t n, ft_error *err);
/* One-sided backends bracket their bytes with these. */
int ft_lease_acquire(ft_agent *a, ft_remote *r, const ft_desc *d, size_t n, int *fd, uint64_t *lease,
                     ft_error *err);
int ft_lease_release(ft_agent *a, ft_remote *r, int fd, uint64_t lease, const uint8_t *notif, size_t notif_len,
                     ft_error *err);

/* shm.c */
int ft_host_id(char *out, size_t cap);
void ft_shm_sweep(void);
int ft_shm_alloc(ft_agent *a, ft_region *r, ft_error *err);
void ft_shm_free(ft_region *r);
void ft_shm_map_remote(ft_agent *a, ft_remote *r);
void ft_shm_unmap_remote(ft_remote *r);
int ft_shm_usable(ft_agent *a, ft_remote *r, ft_rregion **rr, size_t n);
int ft_shm_xfer(ft_agent *a, struct ft_request *req, ft_error *err);

/* ucx.c (stubs when built without UCX) */
#ifdef FT_HAVE_UCX
int ft_ucx_init(ft_agent *a, ft_error *err);
void ft_ucx_fini(ft_agent *a);
int ft_ucx_register(ft_agent *a, ft_region *r, ft_error *err);
void ft_ucx_deregister(ft_agent *a, ft_region *r);
int ft_ucx_worker_address(ft_agent *a, const uint8_t **p, size_t *n);
int ft_ucx_rkey(ft_region *r, const uint8_t **p, size_t *n);
void ft_ucx_load_remote(ft_agent *a, ft_remote *r);
void ft_ucx_unload_remote(ft_remote *r);
int ft_ucx_usable(ft_remote *r, ft_rregion **rr, size_t n);
int ft_ucx_xfer(ft_agent *a, struct ft_request *req, ft_error *err);
#else
static inline int ft_ucx_init(ft_agent *a, ft_error *err) { (void)a; return ft_fail(err, FT_EUNSUPPORTED, "built without UCX"); }
static inline void ft_ucx_fini(ft_agent *a) { (void)a; }
static inline int ft_ucx_register(ft_agent *a, ft_region *r, ft_error *err) { (void)a; (void)r; (void)err; return FT_OK; }
static inline void ft_ucx_deregister(ft_agent *a, ft_region *r) { (void)a; (void)r; }
static inline int ft_ucx_worker_address(ft_agent *a, const uint8_t **p, size_t *n) { (void)a; *p = NULL; *n = 0; return 0; }
static inline int ft_ucx_rkey(ft_region *r, const uint8_t **p, size_t *n) { (void)r; *p = NULL; *n = 0; return 0; }
static inline void ft_ucx_load_remote(ft_agent *a, ft_remote *r) { (void)a; (void)r; }
static inline void ft_ucx_unload_remote(ft_remote *r) { (void)r; }
static inline int ft_ucx_usable(ft_remote *r, ft_rregion **rr, size_t n) { (void)r; (void)rr; (void)n; return 0; }
static inline int ft_ucx_xfer(ft_agent *a, struct ft_request *req, ft_error *err) { (void)a; (void)req; return ft_fail(err, FT_EUNSUPPORTED, "built without UCX"); }
#endif

#endif
