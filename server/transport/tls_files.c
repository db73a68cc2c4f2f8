#include "transport/tls_files.h"

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "domain/log.h"

#define PEM_MAX (1024 * 1024)
#define CHECK_INTERVAL_MS 1000

typedef struct file_id {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
} file_id;

typedef struct pem_set {
    char *cert, *key, *ca;
    int64_t not_after;
} pem_set;

struct rd_tls_files {
    char *paths[3];              /* cert, key, ca (NULL = none) */
    pthread_mutex_t lock;        /* the fetcher may run on any gRPC thread */
    file_id seen[3];
    int64_t next_check_ms;
    pem_set current;             /* what gRPC was last given; pending until taken */
    bool pending;                /* current not yet handed to gRPC */
    atomic_int_fast64_t not_after;
    atomic_uint_fast64_t reloads;
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void wipe(char *s)
{
    if (s)
        memset(s, 0, strlen(s));
    free(s);
}

static void pem_set_free(pem_set *p)
{
    free(p->cert);
    wipe(p->key);
    free(p->ca);
    *p = (pem_set){0};
}

static char *read_pem(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = f ? malloc(PEM_MAX + 1) : NULL;
    size_t n = buf ? fread(buf, 1, PEM_MAX, f) : 0;
    if (f)
        fclose(f);
    if (!buf || n == 0) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

static bool identify(const char *path, file_id *id)
{
    struct stat st;
    if (!path || stat(path, &st) != 0)
        return false;
    *id = (file_id){.dev = st.st_dev, .ino = st.st_ino, .size = st.st_size, .mtime = st.st_mtim};
    return true;
}

static bool same_id(const file_id *a, const file_id *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* notAfter of the first certificate of the chain, checking that `key` is
 * its private key; -1 when they do not load or do not match. */
static int64_t check_pair(const char *cert, const char *key)
{
    BIO *cb = BIO_new_mem_buf(cert, -1), *kb = BIO_new_mem_buf(key, -1);
    X509 *x = cb ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
    EVP_PKEY *k = kb ? PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL) : NULL;
    int64_t not_after = -1;
    struct tm tm;
    if (x && k && X509_check_private_key(x, k) == 1 &&
        ASN1_TIME_to_tm(X509_get0_notAfter(x), &tm) == 1)
        not_after = (int64_t)timegm(&tm);
    X509_free(x);
    EVP_PKEY_free(k);
    BIO_free(cb);
    BIO_free(kb);
    return not_after;
}

/* All three files, read and checked; false with *why when they do not load. */
static bool load(const rd_tls_files *tf, pem_set *out, const char **why)
{
    *out = (pem_set){0};
    out->cert = read_pem(tf->paths[0]);
    out->key = out->cert ? read_pem(tf->paths[1]) : NULL;
    out->ca = out->key && tf->paths[2] ? read_pem(tf->paths[2]) : NULL;
    if (!out->cert || !out->key || (tf->paths[2] && !out->ca)) {
        *why = "cannot read a file";
    } else if ((out->not_after = check_pair(out->cert, out->key)) < 0) {
        *why = "the certificate or key is not usable (or they do not match)";
    } else {
        return true;
    }
    pem_set_free(out);
    return false;
}

static void note_ids(rd_tls_files *tf)
{
    for (int i = 0; i < 3; i++)
        if (!identify(tf->paths[i], &tf->seen[i]))
            tf->seen[i] = (file_id){0};
}

rd_tls_files *rd_tls_files_new(const char *cert_file, const char *key_file, const char *ca_file,
                               rd_status *st)
{
    rd_tls_files *tf = calloc(1, sizeof *tf);
    if (!tf) {
        rd_status_set(st, RD_ERR_NOMEM, "server.tls: out of memory");
        return NULL;
    }
    const char *given[3] = {cert_file, key_file, ca_file};
    for (int i = 0; i < 3; i++)
        tf->paths[i] = given[i] ? strdup(given[i]) : NULL;
    pthread_mutex_init(&tf->lock, NULL);
    const char *why;
    note_ids(tf);
    if (!load(tf, &tf->current, &why)) {
        rd_status_set(st, RD_ERR_CONFIG, "server.tls: %s (%s, %s%s%s)", why, cert_file, key_file,
                      ca_file ? ", " : "", ca_file ? ca_file : "");
        rd_tls_files_free(tf);
        return NULL;
    }
    tf->pending = true;
    atomic_init(&tf->not_after, tf->current.not_after);
    atomic_init(&tf->reloads, 0);
    return tf;
}

/* gRPC 1.51 asserts that a fetched config has root certificates even when
 * no client certificate is requested; then the server's own chain stands
 * in, unused. */
static grpc_ssl_server_certificate_config *config_of(const pem_set *p)
{
    grpc_ssl_pem_key_cert_pair pair = {.private_key = p->key, .cert_chain = p->cert};
    return grpc_ssl_server_certificate_config_create(p->ca ? p->ca : p->cert, &pair, 1);
}

static void log_reload(const char *msg, rd_log_level level, const rd_tls_files *tf,
                       const char *why, int64_t not_after)
{
    char fields[1024] = "", when[32];
    rd_log_kv(fields, sizeof fields, "cert_file", tf->paths[0]);
    if (why)
        rd_log_kv(fields, sizeof fields, "error", why);
    if (not_after > 0) {
        snprintf(when, sizeof when, "%lld", (long long)not_after);
        rd_log_kv(fields, sizeof fields, "not_after_unix", when);
    }
    rd_log(level, msg, fields);
}

/* gRPC's fetcher: the pair to use now. */
static grpc_ssl_certificate_config_reload_status fetch(void *arg,
                                                       grpc_ssl_server_certificate_config **config)
{
    rd_tls_files *tf = arg;
    grpc_ssl_certificate_config_reload_status rc = GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_UNCHANGED;
    pthread_mutex_lock(&tf->lock);
    int64_t now = mono_ms();
    if (!tf->pending && now >= tf->next_check_ms) {
        tf->next_check_ms = now + CHECK_INTERVAL_MS;
        bool changed = false;
        for (int i = 0; i < 3 && !changed; i++) {
            file_id id = {0};
            if (tf->paths[i] && (!identify(tf->paths[i], &id) || !same_id(&id, &tf->seen[i])))
                changed = true;
        }
        if (changed) {
            pem_set next;
            const char *why;
            note_ids(tf); /* a change that fails is reported once, not at every handshake */
            if (load(tf, &next, &why)) {
                pem_set_free(&tf->current);
                tf->current = next;
                tf->pending = true;
                atomic_fetch_add(&tf->reloads, 1);
                log_reload("TLS certificate reloaded", RD_LOG_INFO, tf, NULL, next.not_after);
            } else {
                log_reload("TLS files changed but do not load; the previous certificate stays",
                           RD_LOG_ERROR, tf, why, 0);
            }
        }
    }
    if (tf->pending && (*config = config_of(&tf->current)) != NULL) {
        tf->pending = false;
        atomic_store(&tf->not_after, tf->current.not_after);
        rc = GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_NEW;
    }
    pthread_mutex_unlock(&tf->lock);
    return rc;
}

grpc_server_credentials *rd_tls_files_credentials(rd_tls_files *tf)
{
    grpc_ssl_server_credentials_options *opts =
        grpc_ssl_server_credentials_create_options_using_config_fetcher(
            tf->paths[2] ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                         : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE,
            fetch, tf);
    return opts ? grpc_ssl_server_credentials_create_with_options(opts) : NULL;
}

int64_t rd_tls_files_not_after(const rd_tls_files *tf)
{
    return tf ? atomic_load(&tf->not_after) : 0;
}

uint64_t rd_tls_files_reloads(const rd_tls_files *tf)
{
    return tf ? atomic_load(&tf->reloads) : 0;
}

void rd_tls_files_free(rd_tls_files *tf)
{
    if (!tf)
        return;
    pem_set_free(&tf->current);
    for (int i = 0; i < 3; i++)
        free(tf->paths[i]);
    pthread_mutex_destroy(&tf->lock);
    free(tf);
}
