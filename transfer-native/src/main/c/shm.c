/*
 * The shm backend: same-host transfers as one memcpy per descriptor.
 *
 * Constraint (documented in the README): the shm backend reaches only remote regions that the
 * remote agent allocated with ft_alloc_shared. Such a region is a POSIX shared-memory segment
 * (shm_open + mmap, mode 0600, so the peer must run as the same user); a peer on the same host
 * (same boot id and host name) maps it when it loads the metadata, sized by fstat, never by what
 * the metadata claims. Local memory can be any registered DRAM. We chose this over
 * process_vm_readv/writev, which needs ptrace permission and is often blocked.
 *
 * The target takes part through the control channel: the initiator leases the remote descriptors
 * (the target validates and pins them, so a deregistration waits), copies, then releases the lease,
 * which also carries the notification.
 */
#include "ft_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SHM_PREFIX "flotilla-"

int ft_host_id(char *out, size_t cap) {
    char boot[64] = "unknown-boot", host[64] = "unknown-host";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (fgets(boot, sizeof boot, f)) boot[strcspn(boot, "\r\n")] = 0;
        fclose(f);
    }
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = 0;
    snprintf(out, cap, "%s/%s", boot, host);
    return 0;
}

/* Unlinks segments left by processes that died without deregistering (names carry the pid). */
void ft_shm_sweep(void) {
    DIR *dir = opendir("/dev/shm");
    if (!dir) return;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        long pid;
        if (strncmp(e->d_name, SHM_PREFIX, strlen(SHM_PREFIX)) != 0) continue;
        if (sscanf(e->d_name + strlen(SHM_PREFIX), "%ld-", &pid) != 1 || pid <= 0) continue;
        if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
            char name[300];
            snprintf(name, sizeof name, "/%s", e->d_name);
            shm_unlink(name);
        }
    }
    closedir(dir);
}

int ft_shm_alloc(ft_agent *a, ft_region *r, ft_error *err) {
    snprintf(r->shm_name, sizeof r->shm_name, "/" SHM_PREFIX "%ld-%016llx-%llu", (long)getpid(),
             (unsigned long long)a->instance, (unsigned long long)r->id);
    int fd = shm_open(r->shm_name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) return ft_fail(err, FT_EIO, "shm_open(%s) failed: %s", r->shm_name, strerror(errno));
    /* Reserve the pages now: a tmpfs too small for the segment (a container's default 64 MiB /dev/shm)
     * then fails here with ENOSPC instead of handing out memory whose first write past the free space
     * raises SIGBUS. tmpfs refuses a length beyond its size before allocating anything. */
    void *p = MAP_FAILED;
    int e = 0;
    if (ftruncate(fd, (off_t)r->len) != 0) e = errno;
    else if ((e = posix_fallocate(fd, 0, (off_t)r->len)) != 0) { /* posix_fallocate returns the error */ }
    else if ((p = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) e = errno;
    close(fd);
    if (p == MAP_FAILED) {
        shm_unlink(r->shm_name);
        return ft_fail(err, FT_ENOMEM, "cannot allocate %llu bytes of shared memory in /dev/shm: %s", (unsigned long long)r->len,
                       strerror(e));
    }
    r->base = p;
    return FT_OK;
}

void ft_shm_free(ft_region *r) {
    if (r->base) munmap(r->base, r->len);
    shm_unlink(r->shm_name);
    r->base = NULL;
}

void ft_shm_map_remote(ft_agent *a, ft_remote *r) {
    if (!(a->backends & FT_BACKEND_SHM) || !(r->backends & FT_BACKEND_SHM) || strcmp(a->host_id, r->host_id) != 0) return;
    for (uint32_t i = 0; i < r->nregions; i++) {
        ft_rregion *g = &r->regions[i];
        if (!g->shared || g->shm_name[0] != '/') continue;
        int fd = shm_open(g->shm_name, O_RDWR | O_CLOEXEC, 0);
        if (fd < 0) continue; /* another host after all, or already deregistered: tcp will serve */
        struct stat st;
        if (fstat(fd, &st) == 0 && (uint64_t)st.st_size >= g->len) {
            void *p = mmap(NULL, g->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
            if (p != MAP_FAILED) {
                g->map = p;
                g->map_len = g->len;
            }
        }
        close(fd);
    }
}

void ft_shm_unmap_remote(ft_remote *r) {
    for (uint32_t i = 0; i < r->nregions; i++) {
        if (r->regions[i].map) munmap(r->regions[i].map, r->regions[i].map_len);
        r->regions[i].map = NULL;
    }
}

int ft_shm_usable(ft_agent *a, ft_remote *r, ft_rregion **rr, size_t n) {
    if (strcmp(a->host_id, r->host_id) != 0) return 0;
    for (size_t i = 0; i < n; i++)
        if (!rr[i]->map) return 0;
    return 1;
}

int ft_shm_xfer(ft_agent *a, struct ft_request *q, ft_error *err) {
    int fd;
    uint64_t lease;
    int rc = ft_lease_acquire(a, q->remote, q->rdesc, q->n, &fd, &lease, err);
    if (rc) return rc;
    for (size_t i = 0; i < q->n; i++) {
        uint8_t *remote = q->rreg[i]->map + q->rdesc[i].offset; /* bounds checked against the mapping at post */
        if (q->op == FT_OP_READ) memcpy(q->lptr[i], remote, q->rdesc[i].length);
        else memcpy(remote, q->lptr[i], q->rdesc[i].length);
    }
    return ft_lease_release(a, q->remote, fd, lease, q->notif, q->notif_len, err);
}
