/*
 * C test driver for the transfer library, built with -fsanitize=address and run by Maven in the
 * test phase. Exercises register / transfer / deregister / rejection paths over shm and tcp between
 * agents in one process (threads) and with a peer in a forked child process. Exits non-zero on a
 * failed check; AddressSanitizer / LeakSanitizer reports exit with their own code (23).
 */
#include "ft.h"
#include "ft_impl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;
#define CHECK(cond, ...)                                                            \
    do {                                                                            \
        if (!(cond)) {                                                              \
            failures++;                                                             \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);        \
            fprintf(stderr, __VA_ARGS__);                                           \
            fprintf(stderr, "\n");                                                  \
        }                                                                           \
    } while (0)

static void fill(uint8_t *p, size_t n, uint32_t seed) {
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        p[i] = (uint8_t)x;
    }
}

static uint64_t agent(const char *name, unsigned backends) {
    ft_config cfg = {backends, "127.0.0.1", 0, 2, 5000};
    ft_error err = {0};
    uint64_t h = 0;
    int rc = ft_agent_create(name, &cfg, &h, &err);
    CHECK(rc == FT_OK, "create %s: %s", name, err.msg);
    return h;
}

static void exchange(uint64_t from, uint64_t to) {
    uint8_t *md = NULL;
    size_t len = 0;
    ft_error err = {0};
    CHECK(ft_local_metadata(from, &md, &len, &err) == FT_OK, "metadata: %s", err.msg);
    char name[FT_NAME_MAX];
    CHECK(ft_load_remote(to, md, len, name, sizeof name, &err) == FT_OK, "load: %s", err.msg);
    free(md);
}

/* Posts one request and waits; returns the final status and fills *err. */
static int xfer(uint64_t a, int op, const char *remote, const ft_desc *l, const ft_desc *r, size_t n, const char *notif,
                int *backend, ft_error *err) {
    ft_request *q = NULL;
    int rc = ft_post(a, op, remote, l, r, n, (const uint8_t *)notif, notif ? strlen(notif) : 0, &q, err);
    if (rc != FT_OK) return -rc;
    int s = ft_request_wait(q, 20LL * 1000000000LL, err);
    if (backend) *backend = ft_request_backend(q);
    ft_request_release(q);
    return s;
}

static int has_notif(uint64_t a, const char *from, const char *text) {
    ft_notif *list = NULL;
    size_t n = 0;
    int found = 0;
    ft_poll_notifications(a, &list, &n, NULL);
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i].agent, from) == 0 && list[i].length == strlen(text) && memcmp(list[i].payload, text, list[i].length) == 0) found = 1;
    ft_notifs_free(list, n);
    return found;
}

static void test_metadata_fuzz(uint64_t a) {
    uint8_t *md = NULL;
    size_t len = 0;
    ft_local_metadata(a, &md, &len, NULL);
    uint64_t probe = agent("probe", FT_BACKEND_TCP);
    for (size_t cut = 0; cut < len; cut++) {
        ft_error err = {0};
        CHECK(ft_load_remote(probe, md, cut, NULL, 0, &err) == FT_EPROTO, "truncated metadata (%zu of %zu) accepted", cut, len);
    }
    uint32_t x = 7;
    for (int round = 0; round < 2000; round++) {
        uint8_t *copy = malloc(len);
        memcpy(copy, md, len);
        for (int k = 0; k < 3; k++) {
            x = x * 1103515245u + 12345u;
            copy[x % len] ^= (uint8_t)(1u << (x >> 28 & 7));
        }
        ft_load_remote(probe, copy, len, NULL, 0, NULL); /* must not crash or leak, whatever it decides */
        free(copy);
    }
    free(md);
    ft_agent_destroy(probe);
}

typedef struct {
    uint64_t a;
    const char *remote;
    uint64_t local_region, remote_region;
    uint64_t slot;
    int ok;
} worker_arg;

static void *concurrent_worker(void *p) {
    worker_arg *w = p;
    w->ok = 1;
    for (int i = 0; i < 40; i++) {
        ft_desc l = {w->local_region, w->slot * 4096, 4096}, r = {w->remote_region, w->slot * 4096, 4096};
        ft_error err = {0};
        int s = xfer(w->a, i % 2 ? FT_OP_READ : FT_OP_WRITE, w->remote, &l, &r, 1, NULL, NULL, &err);
        if (s != FT_DONE) { w->ok = 0; fprintf(stderr, "concurrent: %s\n", err.msg); }
    }
    return NULL;
}

/* The child process: an agent with a shared region; answers the parent through pipes. */
static int child_peer(int to_parent, int from_parent) {
    uint64_t c = agent("child", FT_BACKEND_SHM | FT_BACKEND_TCP);
    uint64_t rid;
    void *mem;
    ft_alloc_shared(c, 1 << 20, &rid, &mem, NULL);
    fill(mem, 1 << 20, 99);
    uint8_t *md;
    size_t len;
    ft_local_metadata(c, &md, &len, NULL);
    uint32_t n = (uint32_t)len;
    if (write(to_parent, &n, 4) != 4 || write(to_parent, md, len) != (ssize_t)len) return 2;
    free(md);
    char go;
    if (read(from_parent, &go, 1) != 1) return 3; /* the parent wrote our region and notified us */
    int ok = has_notif(c, "parent", "written");
    uint8_t *expect = malloc(1 << 16);
    fill(expect, 1 << 16, 5);
    ok = ok && memcmp((uint8_t *)mem + 4096, expect, 1 << 16) == 0;
    free(expect);
    ft_deregister(c, rid, NULL);
    ft_agent_destroy(c);
    return ok ? 0 : 4;
}

static void test_cross_process(void) {
    int up[2], down[2];
    if (pipe(up) || pipe(down)) { CHECK(0, "pipe"); return; }
    pid_t pid = fork();
    if (pid == 0) {
        close(up[0]);
        close(down[1]);
        exit(child_peer(up[1], down[0])); /* exit, not _exit: LeakSanitizer checks the child too */
    }
    close(up[1]);
    close(down[0]);
    uint32_t n = 0;
    CHECK(read(up[0], &n, 4) == 4, "child metadata length");
    uint8_t *md = malloc(n);
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(up[0], md + got, n - got);
        if (k <= 0) break;
        got += (size_t)k;
    }
    uint64_t p = agent("parent", FT_BACKEND_SHM | FT_BACKEND_TCP);
    char name[FT_NAME_MAX];
    ft_error err = {0};
    CHECK(ft_load_remote(p, md, n, name, sizeof name, &err) == FT_OK && strcmp(name, "child") == 0, "load child: %s", err.msg);
    free(md);
    uint8_t *buf = malloc(1 << 16), *back = malloc(1 << 16);
    fill(buf, 1 << 16, 5);
    uint64_t lr, lb;
    ft_register(p, buf, 1 << 16, FT_MEM_DRAM, &lr, NULL);
    ft_register(p, back, 1 << 16, FT_MEM_DRAM, &lb, NULL);
    /* child's only region has id 1 */
    ft_desc l = {lr, 0, 1 << 16}, r = {1, 4096, 1 << 16}, lbk = {lb, 0, 1 << 16};
    int backend = 0;
    CHECK(xfer(p, FT_OP_WRITE, "child", &l, &r, 1, "written", &backend, &err) == FT_DONE, "cross-process write: %s", err.msg);
    CHECK(backend == FT_BACKEND_SHM, "cross-process write used backend %d", backend);
    CHECK(xfer(p, FT_OP_READ, "child", &lbk, &r, 1, NULL, NULL, &err) == FT_DONE, "cross-process read: %s", err.msg);
    CHECK(memcmp(buf, back, 1 << 16) == 0, "cross-process read back differs");
    CHECK(write(down[1], "g", 1) == 1, "signal child");
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child peer exit status %d", status);
    ft_deregister(p, lr, NULL);
    ft_deregister(p, lb, NULL);
    ft_agent_destroy(p);
    free(buf);
    free(back);
    close(up[0]);
    close(down[1]);
}


/* ucx between two agents of this process, when the build has it: arbitrary (malloc'd) memory */
static void test_ucx(void) {
    if (!(ft_compiled_backends() & FT_BACKEND_UCX)) {
        printf("ft_asan_test: ucx not built, ucx checks skipped\n");
        return;
    }
    ft_config cfg = {FT_BACKEND_UCX, "127.0.0.1", 0, 2, 5000};
    uint64_t x = 0, y = 0;
    ft_error err = {0};
    if (ft_agent_create("ucx-x", &cfg, &x, &err) != FT_OK || ft_agent_create("ucx-y", &cfg, &y, &err) != FT_OK) {
        printf("ft_asan_test: ucx compiled in but unusable here (%s), ucx checks skipped\n", err.msg);
        if (x) ft_agent_destroy(x);
        return;
    }
    size_t n = 3 << 20;
    uint8_t *mx = malloc(n), *my = malloc(n);
    fill(mx, n, 11);
    memset(my, 0, n);
    uint64_t rx, ry;
    ft_register(x, mx, n, FT_MEM_DRAM, &rx, NULL);
    ft_register(y, my, n, FT_MEM_DRAM, &ry, NULL);
    exchange(y, x);
    exchange(x, y);
    ft_desc l[3] = {{rx, 0, 1}, {rx, 100, 1 << 20}, {rx, 2 << 20, (1 << 20) - 7}};
    ft_desc r[3] = {{ry, (1 << 20) + 5, 1}, {ry, 2 << 20, 1 << 20}, {ry, 0, (1 << 20) - 7}};
    int backend = 0;
    CHECK(xfer(x, FT_OP_WRITE, "ucx-y", l, r, 3, "ucx-put", &backend, &err) == FT_DONE, "ucx write: %s", err.msg);
    CHECK(backend == FT_BACKEND_UCX, "ucx backend %d", backend);
    for (int i = 0; i < 3; i++) CHECK(memcmp(mx + l[i].offset, my + r[i].offset, l[i].length) == 0, "ucx put %d differs", i);
    CHECK(has_notif(y, "ucx-x", "ucx-put"), "ucx notification");
    fill(my, n, 12);
    CHECK(xfer(x, FT_OP_READ, "ucx-y", l, r, 3, NULL, NULL, &err) == FT_DONE, "ucx read: %s", err.msg);
    for (int i = 0; i < 3; i++) CHECK(memcmp(mx + l[i].offset, my + r[i].offset, l[i].length) == 0, "ucx get %d differs", i);
    CHECK(ft_deregister(y, ry, &err) == FT_OK, "%s", err.msg);
    CHECK(xfer(x, FT_OP_WRITE, "ucx-y", l, r, 1, NULL, NULL, &err) == FT_ERROR && err.code == FT_EREGION, "ucx deregistered: %d %s", err.code, err.msg);
    ft_agent_destroy(y); /* x still holds y's metadata and a connected endpoint */
    CHECK(xfer(x, FT_OP_WRITE, "ucx-y", l, r, 1, NULL, NULL, &err) == FT_ERROR && err.code == FT_EIO, "ucx to a gone agent: %d %s", err.code, err.msg);
    ft_agent_destroy(x);
    free(mx);
    free(my);
}

int main(void) {
    test_cross_process(); /* first: fork before this process has agent threads */

    uint64_t a = agent("alpha", FT_BACKEND_SHM | FT_BACKEND_TCP);
    uint64_t b = agent("beta", FT_BACKEND_SHM | FT_BACKEND_TCP);
    uint64_t c = agent("gamma", FT_BACKEND_TCP);
    ft_error err = {0};

    const size_t big = 4 << 20;
    uint8_t *abuf = malloc(big), *bplain = malloc(1 << 20);
    uint64_t a_plain, a_shared, b_shared, b_plain;
    void *a_shm, *b_shm;
    CHECK(ft_register(a, abuf, big, FT_MEM_DRAM, &a_plain, &err) == FT_OK, "%s", err.msg);
    CHECK(ft_alloc_shared(a, 1 << 20, &a_shared, &a_shm, &err) == FT_OK, "%s", err.msg);
    CHECK(ft_alloc_shared(b, big, &b_shared, &b_shm, &err) == FT_OK, "%s", err.msg);
    CHECK(ft_register(b, bplain, 1 << 20, FT_MEM_DRAM, &b_plain, &err) == FT_OK, "%s", err.msg);
    fill(abuf, big, 1);
    fill(bplain, 1 << 20, 2);
    exchange(b, a);
    exchange(a, b);
    exchange(b, c);

    /* shm write, many descriptors, with a notification that is queued before DONE */
    ft_desc l[64], r[64];
    for (int i = 0; i < 64; i++) {
        l[i] = (ft_desc){a_plain, (uint64_t)i * 65536, 1000 + (uint64_t)i * 7};
        r[i] = (ft_desc){b_shared, (uint64_t)(63 - i) * 65536 + 3, 1000 + (uint64_t)i * 7};
    }
    int backend = 0;
    CHECK(xfer(a, FT_OP_WRITE, "beta", l, r, 64, "shm-write", &backend, &err) == FT_DONE, "shm write: %s", err.msg);
    CHECK(backend == FT_BACKEND_SHM, "backend %d", backend);
    for (int i = 0; i < 64; i++)
        CHECK(memcmp(abuf + l[i].offset, (uint8_t *)b_shm + r[i].offset, l[i].length) == 0, "shm write desc %d differs", i);
    CHECK(has_notif(b, "alpha", "shm-write"), "shm write notification missing");

    /* tcp read of a plain (not shared) remote region, by address */
    ft_desc la = {FT_REGION_ADDR, (uint64_t)(uintptr_t)(abuf + 100), 1 << 19};
    ft_desc ra = {FT_REGION_ADDR, (uint64_t)(uintptr_t)(bplain + 5), 1 << 19};
    CHECK(xfer(a, FT_OP_READ, "beta", &la, &ra, 1, "tcp-read", &backend, &err) == FT_DONE, "tcp read: %s", err.msg);
    CHECK(backend == FT_BACKEND_TCP, "backend %d", backend);
    CHECK(memcmp(abuf + 100, bplain + 5, 1 << 19) == 0, "tcp read differs");
    CHECK(has_notif(b, "alpha", "tcp-read"), "tcp read notification missing");

    /* tcp-only agent writes into the shared region over tcp */
    uint8_t *cbuf = malloc(1 << 16);
    uint64_t c_plain;
    fill(cbuf, 1 << 16, 3);
    ft_register(c, cbuf, 1 << 16, FT_MEM_DRAM, &c_plain, NULL);
    ft_desc lc = {c_plain, 0, 1 << 16}, rc_ = {b_shared, 1 << 21, 1 << 16};
    CHECK(xfer(c, FT_OP_WRITE, "beta", &lc, &rc_, 1, NULL, &backend, &err) == FT_DONE, "tcp write: %s", err.msg);
    CHECK(backend == FT_BACKEND_TCP && memcmp(cbuf, (uint8_t *)b_shm + (1 << 21), 1 << 16) == 0, "tcp write differs");

    /* notifications without data */
    CHECK(ft_send_notification(c, "beta", (const uint8_t *)"hello", 5, &err) == FT_OK, "%s", err.msg);
    CHECK(has_notif(b, "gamma", "hello"), "plain notification missing");

    /* rejections before any byte moves */
    uint8_t before[64];
    memcpy(before, b_shm, 64);
    ft_request *q = NULL;
    ft_desc oob_r = {b_shared, big - 10, 64}, ok_l = {a_plain, 0, 64}, oob_l = {a_plain, big - 1, 64}, ok_r = {b_shared, 0, 64};
    CHECK(ft_post(a, FT_OP_WRITE, "beta", &ok_l, &oob_r, 1, NULL, 0, &q, &err) == FT_EBOUNDS, "remote out of bounds: %d", err.code);
    CHECK(ft_post(a, FT_OP_WRITE, "beta", &oob_l, &ok_r, 1, NULL, 0, &q, &err) == FT_EBOUNDS, "local out of bounds: %d", err.code);
    CHECK(ft_post(a, FT_OP_WRITE, "nobody", &ok_l, &ok_r, 1, NULL, 0, &q, &err) == FT_EUNKNOWN_AGENT, "unknown agent: %d", err.code);
    ft_desc bad_region = {999, 0, 64};
    CHECK(ft_post(a, FT_OP_WRITE, "beta", &ok_l, &bad_region, 1, NULL, 0, &q, &err) == FT_EREGION, "unknown region: %d", err.code);
    ft_desc huge = {b_shared, 1, UINT64_MAX}, huge_l = {a_plain, 1, UINT64_MAX};
    CHECK(ft_post(a, FT_OP_WRITE, "beta", &huge_l, &huge, 1, NULL, 0, &q, &err) != FT_OK, "overflowing length accepted");
    CHECK(memcmp(before, b_shm, 64) == 0, "rejected write changed target memory");
    uint64_t vram;
    CHECK(ft_register(a, abuf, 64, FT_MEM_VRAM, &vram, &err) == FT_EUNSUPPORTED, "VRAM: %d", err.code);

    /* concurrent requests from four threads */
    pthread_t t[4];
    worker_arg w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker_arg){a, "beta", a_plain, b_shared, (uint64_t)i, 0};
        pthread_create(&t[i], NULL, concurrent_worker, &w[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CHECK(w[i].ok, "concurrent worker %d", i);
    }

    /* cancel: whatever did not start reports CANCELLED; everything ends */
    ft_request *many[32];
    int posted = 0, cancelled = 0;
    for (int i = 0; i < 32; i++) {
        ft_desc ll = {a_plain, 0, 1 << 20}, rr = {b_shared, 0, 1 << 20};
        if (ft_post(a, FT_OP_READ, "beta", &ll, &rr, 1, NULL, 0, &many[posted], NULL) == FT_OK) posted++;
    }
    for (int i = posted - 1; i >= 0; i--) cancelled += ft_request_cancel(many[i]);
    for (int i = 0; i < posted; i++) {
        int s = ft_request_wait(many[i], 20LL * 1000000000LL, &err);
        CHECK(s == FT_DONE || (s == FT_ERROR && err.code == FT_ECANCELLED), "request %d status %d", i, s);
        ft_request_release(many[i]);
    }
    CHECK(posted == 32 && cancelled > 0, "posted %d cancelled %d", posted, cancelled);

    /* deregistered on the target after the initiator loaded its metadata: the target refuses */
    memcpy(before, bplain, 64);
    CHECK(ft_deregister(b, b_plain, &err) == FT_OK, "%s", err.msg);
    ft_desc rp = {b_plain, 0, 64};
    CHECK(xfer(a, FT_OP_WRITE, "beta", &ok_l, &rp, 1, NULL, NULL, &err) == FT_ERROR && err.code == FT_EREGION,
          "tcp write to deregistered region: %d %s", err.code, err.msg);
    CHECK(memcmp(before, bplain, 64) == 0, "deregistered region changed");
    CHECK(ft_deregister(b, b_shared, &err) == FT_OK, "%s", err.msg);
    CHECK(xfer(a, FT_OP_WRITE, "beta", &ok_l, &ok_r, 1, NULL, &backend, &err) == FT_ERROR && err.code == FT_EREGION,
          "shm write to deregistered region: %d %s", err.code, err.msg);
    CHECK(ft_deregister(b, b_shared, &err) == FT_EREGION, "double deregister: %d", err.code);
    /* deregistered locally: the initiator refuses */
    CHECK(ft_deregister(a, a_shared, &err) == FT_OK, "%s", err.msg);
    ft_desc gone = {a_shared, 0, 64};
    exchange(b, a);
    CHECK(ft_post(a, FT_OP_READ, "beta", &gone, &ok_r, 1, NULL, 0, &q, &err) != FT_OK, "local deregistered accepted");

    /* a restarted peer on the same port is another agent: the target refuses the old metadata */
    uint8_t *md_b;
    size_t md_len;
    ft_local_metadata(b, &md_b, &md_len, NULL);
    ft_remote *decoded = NULL;
    ft_meta_decode(md_b, md_len, &decoded, NULL);
    int port = decoded ? decoded->tcp_port : 0;
    if (decoded) { ft_remote_free_fields(decoded); free(decoded); }
    free(md_b);
    ft_agent_destroy(b);
    free(bplain);
    ft_config same_port = {FT_BACKEND_TCP, "127.0.0.1", port, 1, 5000};
    uint64_t b2 = 0;
    CHECK(ft_agent_create("beta", &same_port, &b2, &err) == FT_OK, "restart beta on %d: %s", port, err.msg);
    uint8_t *b2mem = calloc(1, 4096);
    uint64_t b2r;
    ft_register(b2, b2mem, 4096, FT_MEM_DRAM, &b2r, NULL);
    ft_desc r2 = {b2r, 0, 64};
    ft_desc lplain = {a_plain, 0, 64};
    CHECK(xfer(a, FT_OP_READ, "beta", &lplain, &r2, 1, NULL, NULL, &err) != FT_DONE, "stale metadata reached a restarted agent");
    CHECK(ft_send_notification(c, "beta", (const uint8_t *)"x", 1, &err) == FT_EUNKNOWN_AGENT, "stale notify: %d %s", err.code, err.msg);
    exchange(b2, a);
    CHECK(xfer(a, FT_OP_READ, "beta", &lplain, &r2, 1, NULL, NULL, &err) == FT_DONE, "fresh metadata: %s", err.msg);

    test_metadata_fuzz(a);
    test_ucx();

    /* destroy with requests queued; releasing them afterwards is safe; stale handles fail cleanly */
    ft_request *late[8];
    int nlate = 0;
    for (int i = 0; i < 8; i++)
        if (ft_post(a, FT_OP_WRITE, "beta", &lplain, &r2, 1, NULL, 0, &late[nlate], NULL) == FT_OK) nlate++;
    ft_agent_destroy(a);
    for (int i = 0; i < nlate; i++) {
        int s = ft_request_status(late[i], NULL);
        CHECK(s == FT_DONE || s == FT_ERROR, "late request %d still pending after destroy", i);
        ft_request_release(late[i]);
    }
    CHECK(ft_register(a, abuf, 64, FT_MEM_DRAM, &vram, &err) == FT_ECLOSED, "stale handle: %d", err.code);

    ft_deregister(b2, b2r, NULL);
    ft_agent_destroy(b2);
    ft_agent_destroy(c);
    free(b2mem);
    free(abuf);
    free(cbuf);

    if (failures) {
        fprintf(stderr, "ft_asan_test: %d check(s) failed\n", failures);
        return 1;
    }
    printf("ft_asan_test: all checks passed (shm + tcp%s, threads + forked peer)\n",
           (ft_compiled_backends() & FT_BACKEND_UCX) ? " + ucx" : "");
    return 0;
}
