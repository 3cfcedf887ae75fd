/*
 * JNI binding for io.flotilla.transfer.NativeBridge. Strings cross as UTF-8 byte arrays (peer
 * names and messages are not trusted to be modified UTF-8). Every ft_error becomes a
 * TransferException built by TransferException.fromNative(int code, byte[] message).
 */
#include "ft.h"
#include "io_flotilla_transfer_NativeBridge.h"

#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static jthrowable make_exception(JNIEnv *env, int code, const char *msg) {
    jclass cls = (*env)->FindClass(env, "io/flotilla/transfer/TransferException");
    if (!cls) return NULL;
    jmethodID m = (*env)->GetStaticMethodID(env, cls, "fromNative", "(I[B)Lio/flotilla/transfer/TransferException;");
    jsize n = (jsize)strlen(msg);
    jbyteArray bytes = (*env)->NewByteArray(env, n);
    if (!m || !bytes) return NULL;
    (*env)->SetByteArrayRegion(env, bytes, 0, n, (const jbyte *)msg);
    return (jthrowable)(*env)->CallStaticObjectMethod(env, cls, m, (jint)code, bytes);
}

static void throw_error(JNIEnv *env, const ft_error *err) {
    if ((*env)->ExceptionCheck(env)) return;
    jthrowable t = make_exception(env, err->code ? err->code : FT_EIO, err->msg[0] ? err->msg : ft_code_name(err->code));
    if (t) (*env)->Throw(env, t);
}

static void throw_code(JNIEnv *env, int code, const char *msg) {
    ft_error err = {code, {0}};
    strncpy(err.msg, msg, sizeof err.msg - 1);
    throw_error(env, &err);
}

/* Copies a UTF-8 byte array into a NUL-terminated buffer; rejects embedded NULs. */
static int copy_name(JNIEnv *env, jbyteArray bytes, char *out, size_t cap) {
    if (!bytes) { throw_code(env, FT_EINVAL, "name is null"); return -1; }
    jsize n = (*env)->GetArrayLength(env, bytes);
    if ((size_t)n >= cap) { throw_code(env, FT_EINVAL, "name too long"); return -1; }
    (*env)->GetByteArrayRegion(env, bytes, 0, n, (jbyte *)out);
    out[n] = 0;
    if (memchr(out, 0, (size_t)n)) { throw_code(env, FT_EINVAL, "name contains NUL"); return -1; }
    return 0;
}

static jbyteArray to_bytes(JNIEnv *env, const void *p, size_t n) {
    jbyteArray a = (*env)->NewByteArray(env, (jsize)n);
    if (a && n) (*env)->SetByteArrayRegion(env, a, 0, (jsize)n, (const jbyte *)p);
    return a;
}

EXPORT JNIEXPORT jint JNICALL Java_io_flotilla_transfer_NativeBridge_abiVersion(JNIEnv *env, jclass c) {
    return FT_ABI_VERSION;
}

EXPORT JNIEXPORT jint JNICALL Java_io_flotilla_transfer_NativeBridge_compiledBackends(JNIEnv *env, jclass c) {
    return (jint)ft_compiled_backends();
}

EXPORT JNIEXPORT jlong JNICALL Java_io_flotilla_transfer_NativeBridge_agentCreate(JNIEnv *env, jclass c, jbyteArray name,
        jint backends, jbyteArray host, jint port, jint workers, jint timeout_ms) {
    char n[FT_NAME_MAX], h[64];
    if (copy_name(env, name, n, sizeof n) || copy_name(env, host, h, sizeof h)) return 0;
    ft_config cfg = {(unsigned)backends, h, port, workers, timeout_ms};
    ft_error err = {0};
    uint64_t agent = 0;
    if (ft_agent_create(n, &cfg, &agent, &err) != FT_OK) throw_error(env, &err);
    return (jlong)agent;
}

EXPORT JNIEXPORT void JNICALL Java_io_flotilla_transfer_NativeBridge_agentDestroy(JNIEnv *env, jclass c, jlong agent) {
    ft_agent_destroy((uint64_t)agent);
}

EXPORT JNIEXPORT jint JNICALL Java_io_flotilla_transfer_NativeBridge_agentBackends(JNIEnv *env, jclass c, jlong agent) {
    unsigned b = 0;
    ft_error err = {0};
    if (ft_agent_backends((uint64_t)agent, &b, &err) != FT_OK) throw_error(env, &err);
    return (jint)b;
}

EXPORT JNIEXPORT jlong JNICALL Java_io_flotilla_transfer_NativeBridge_bufferAddress(JNIEnv *env, jclass c, jobject buffer) {
    void *p = (*env)->GetDirectBufferAddress(env, buffer);
    if (!p) throw_code(env, FT_EINVAL, "not a direct ByteBuffer");
    return (jlong)(uintptr_t)p;
}

EXPORT JNIEXPORT jlong JNICALL Java_io_flotilla_transfer_NativeBridge_registerAddress(JNIEnv *env, jclass c, jlong agent,
        jlong address, jlong length, jint kind) {
    uint64_t id = 0;
    ft_error err = {0};
    if (length <= 0) { throw_code(env, FT_EINVAL, "length must be positive"); return 0; }
    if (ft_register((uint64_t)agent, (void *)(uintptr_t)address, (uint64_t)length, kind, &id, &err) != FT_OK) throw_error(env, &err);
    return (jlong)id;
}

EXPORT JNIEXPORT jobject JNICALL Java_io_flotilla_transfer_NativeBridge_allocShared(JNIEnv *env, jclass c, jlong agent,
        jlong length, jlongArray out) {
    uint64_t id = 0;
    void *addr = NULL;
    ft_error err = {0};
    if (length <= 0) { throw_code(env, FT_EINVAL, "length must be positive"); return NULL; }
    if (ft_alloc_shared((uint64_t)agent, (uint64_t)length, &id, &addr, &err) != FT_OK) { throw_error(env, &err); return NULL; }
    jlong v[2] = {(jlong)id, (jlong)(uintptr_t)addr};
    (*env)->SetLongArrayRegion(env, out, 0, 2, v);
    return length <= 0x7FFFFFFF ? (*env)->NewDirectByteBuffer(env, addr, length) : NULL;
}

EXPORT JNIEXPORT void JNICALL Java_io_flotilla_transfer_NativeBridge_deregister(JNIEnv *env, jclass c, jlong agent, jlong region) {
    ft_error err = {0};
    if (ft_deregister((uint64_t)agent, (uint64_t)region, &err) != FT_OK) throw_error(env, &err);
}

EXPORT JNIEXPORT jbyteArray JNICALL Java_io_flotilla_transfer_NativeBridge_localMetadata(JNIEnv *env, jclass c, jlong agent) {
    uint8_t *buf = NULL;
    size_t len = 0;
    ft_error err = {0};
    if (ft_local_metadata((uint64_t)agent, &buf, &len, &err) != FT_OK) { throw_error(env, &err); return NULL; }
    jbyteArray a = to_bytes(env, buf, len);
    free(buf);
    return a;
}

EXPORT JNIEXPORT jbyteArray JNICALL Java_io_flotilla_transfer_NativeBridge_loadRemote(JNIEnv *env, jclass c, jlong agent,
        jbyteArray metadata) {
    jsize n = (*env)->GetArrayLength(env, metadata);
    jbyte *p = (*env)->GetByteArrayElements(env, metadata, NULL);
    if (!p) return NULL;
    char name[FT_NAME_MAX];
    ft_error err = {0};
    int rc = ft_load_remote((uint64_t)agent, (const uint8_t *)p, (size_t)n, name, sizeof name, &err);
    (*env)->ReleaseByteArrayElements(env, metadata, p, JNI_ABORT);
    if (rc != FT_OK) { throw_error(env, &err); return NULL; }
    return to_bytes(env, name, strlen(name));
}

EXPORT JNIEXPORT void JNICALL Java_io_flotilla_transfer_NativeBridge_invalidateRemote(JNIEnv *env, jclass c, jlong agent,
        jbyteArray remote) {
    char name[FT_NAME_MAX];
    ft_error err = {0};
    if (copy_name(env, remote, name, sizeof name)) return;
    if (ft_invalidate_remote((uint64_t)agent, name, &err) != FT_OK) throw_error(env, &err);
}

static ft_desc *to_descs(JNIEnv *env, jlongArray triples, size_t *n) {
    jsize len = (*env)->GetArrayLength(env, triples);
    *n = (size_t)len / 3;
    ft_desc *d = calloc(*n ? *n : 1, sizeof *d);
    if (!d) { throw_code(env, FT_ENOMEM, "out of memory"); return NULL; }
    jlong *v = (*env)->GetLongArrayElements(env, triples, NULL);
    if (!v) { free(d); return NULL; }
    for (size_t i = 0; i < *n; i++) d[i] = (ft_desc){(uint64_t)v[3 * i], (uint64_t)v[3 * i + 1], (uint64_t)v[3 * i + 2]};
    (*env)->ReleaseLongArrayElements(env, triples, v, JNI_ABORT);
    return d;
}

EXPORT JNIEXPORT jlong JNICALL Java_io_flotilla_transfer_NativeBridge_post(JNIEnv *env, jclass c, jlong agent, jint op,
        jbyteArray remote, jlongArray local_descs, jlongArray remote_descs, jbyteArray notif) {
    char name[FT_NAME_MAX];
    if (copy_name(env, remote, name, sizeof name)) return 0;
    size_t nl = 0, nr = 0;
    ft_desc *l = to_descs(env, local_descs, &nl);
    ft_desc *r = l ? to_descs(env, remote_descs, &nr) : NULL;
    jsize notif_len = notif ? (*env)->GetArrayLength(env, notif) : 0;
    jbyte *np = notif ? (*env)->GetByteArrayElements(env, notif, NULL) : NULL;
    ft_request *req = NULL;
    ft_error err = {0};
    if (l && r && (!notif || np)) {
        if (nl != nr) throw_code(env, FT_EINVAL, "local and remote descriptor lists differ in length");
        else if (ft_post((uint64_t)agent, op, name, l, r, nl, (const uint8_t *)np, (size_t)notif_len, &req, &err) != FT_OK)
            throw_error(env, &err);
    }
    if (np) (*env)->ReleaseByteArrayElements(env, notif, np, JNI_ABORT);
    free(l);
    free(r);
    return (jlong)(uintptr_t)req;
}

EXPORT JNIEXPORT jint JNICALL Java_io_flotilla_transfer_NativeBridge_requestStatus(JNIEnv *env, jclass c, jlong req) {
    return ft_request_status((ft_request *)(uintptr_t)req, NULL);
}

EXPORT JNIEXPORT jint JNICALL Java_io_flotilla_transfer_NativeBridge_requestWait(JNIEnv *env, jclass c, jlong req, jlong nanos) {
    return ft_request_wait((ft_request *)(uintptr_t)req, nanos, NULL);
}

EXPORT JNIEXPORT jboolean JNICALL Java_io_flotilla_transfer_NativeBridge_requestCancel(JNIEnv *env, jclass c, jlong req) {
    return ft_request_cancel((ft_request *)(uintptr_t)req) ? JNI_TRUE : JNI_FALSE;
}

EXPORT JNIEXPORT jint JNICALL Java_io_flotilla_transfer_NativeBridge_requestBackend(JNIEnv *env, jclass c, jlong req) {
    return ft_request_backend((ft_request *)(uintptr_t)req);
}

EXPORT JNIEXPORT jobject JNICALL Java_io_flotilla_transfer_NativeBridge_requestError(JNIEnv *env, jclass c, jlong req) {
    ft_error err = {0};
    if (ft_request_status((ft_request *)(uintptr_t)req, &err) != FT_ERROR) return NULL;
    return make_exception(env, err.code, err.msg);
}

EXPORT JNIEXPORT void JNICALL Java_io_flotilla_transfer_NativeBridge_requestRelease(JNIEnv *env, jclass c, jlong req) {
    ft_request_release((ft_request *)(uintptr_t)req);
}

EXPORT JNIEXPORT void JNICALL Java_io_flotilla_transfer_NativeBridge_sendNotification(JNIEnv *env, jclass c, jlong agent,
        jbyteArray remote, jbyteArray payload) {
    char name[FT_NAME_MAX];
    if (copy_name(env, remote, name, sizeof name)) return;
    jsize n = (*env)->GetArrayLength(env, payload);
    jbyte *p = (*env)->GetByteArrayElements(env, payload, NULL);
    if (!p) return;
    ft_error err = {0};
    int rc = ft_send_notification((uint64_t)agent, name, (const uint8_t *)p, (size_t)n, &err);
    (*env)->ReleaseByteArrayElements(env, payload, p, JNI_ABORT);
    if (rc != FT_OK) throw_error(env, &err);
}

EXPORT JNIEXPORT jobjectArray JNICALL Java_io_flotilla_transfer_NativeBridge_pollNotifications(JNIEnv *env, jclass c, jlong agent) {
    ft_notif *list = NULL;
    size_t n = 0;
    ft_error err = {0};
    if (ft_poll_notifications((uint64_t)agent, &list, &n, &err) != FT_OK) { throw_error(env, &err); return NULL; }
    jclass bytes = (*env)->FindClass(env, "[B");
    jobjectArray out = bytes ? (*env)->NewObjectArray(env, (jsize)(2 * n), bytes, NULL) : NULL;
    for (size_t i = 0; out && i < n; i++) {
        jbyteArray name = to_bytes(env, list[i].agent, strlen(list[i].agent));
        jbyteArray payload = to_bytes(env, list[i].payload, list[i].length);
        if (!name || !payload) { out = NULL; break; }
        (*env)->SetObjectArrayElement(env, out, (jsize)(2 * i), name);
        (*env)->SetObjectArrayElement(env, out, (jsize)(2 * i + 1), payload);
        (*env)->DeleteLocalRef(env, name);
        (*env)->DeleteLocalRef(env, payload);
    }
    ft_notifs_free(list, n);
    return out;
}

EXPORT JNIEXPORT jlong JNICALL Java_io_flotilla_transfer_NativeBridge_benchMemcpy(JNIEnv *env, jclass c, jlong dst, jlong src,
        jlong block, jlong total, jint iters) {
    return ft_bench_memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, (uint64_t)block, (uint64_t)total, iters);
}
