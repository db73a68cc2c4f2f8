/* The operational keys of the main file: server limits, TLS and tokens,
 * metrics, log, reload, and store.redis with its sentinels and cluster;
 * their defaults, every key read, their errors, and secrets kept out of
 * every error message.
 *
 * Each test but the listen-address one writes its files into a fresh
 * temporary directory; the line numbers asserted below are those of the
 * fixture texts, one source line per YAML line. */
#define _GNU_SOURCE /* nftw */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config_fixture.h"

static void test_ops_defaults(void **state)
{
    (void)state;
    rd_config *cfg = load_ok(MAIN_MIN, NULL);
    assert_int_equal(cfg->server.drain_delay_ms, 0);
    assert_int_equal(cfg->server.max_connection_age_ms, 0);
    assert_int_equal(cfg->server.max_concurrent_streams, 100);
    assert_int_equal(cfg->server.memory_limit_bytes, 128u << 20);
    assert_int_equal(cfg->server.handshake_timeout_ms, 10000);
    assert_int_equal(cfg->server.max_connection_idle_ms, 0);
    assert_false(cfg->server.accept_compressed);
    assert_int_equal(cfg->server.max_unsent_answer_bytes, 16u << 20);
    assert_true(cfg->server.reflection);
    assert_int_equal(cfg->server.max_watch_streams, 256);
    assert_false(cfg->server.allow_unauthenticated);
    assert_null(cfg->server.tls.cert_file);
    assert_null(cfg->server.auth_token);
    assert_null(cfg->server.admin_token);
    assert_string_equal(cfg->metrics.listen, "127.0.0.1:9464");
    assert_int_equal(cfg->metrics.max_tools, 1000);
    assert_int_equal(cfg->metrics.max_connections, 128);
    assert_int_equal(cfg->metrics.max_connections_per_ip, 8);
    assert_int_equal(cfg->metrics.threads, 2);
    assert_int_equal(cfg->metrics.connection_timeout_ms, 5000);
    assert_int_equal(cfg->metrics.breaker_refresh_ms, 0);
    assert_null(cfg->metrics.token);
    assert_int_equal(cfg->log_level, RD_CONFIG_LOG_INFO);
    assert_true(cfg->reload_watch);
    assert_string_equal(cfg->store.redis.address, "127.0.0.1:6379");
    assert_string_equal(cfg->store.redis.key_prefix, "recoveryd:");
    assert_int_equal(cfg->store.redis.command_timeout_ms, 50);
    assert_int_equal(cfg->store.redis.closed_cache_ms, 250);
    assert_int_equal(cfg->store.redis.outcome_batch_ms, 5);
    assert_int_equal(cfg->store.redis.read_cache_ms, 100);
    assert_non_null(strstr(cfg->tools_dir, "tools.d"));
    rd_config_free(cfg);
}

static void test_ops_keys_are_read(void **state)
{
    (void)state;
    char path[PATH_MAX];
    put("certs/s.crt", "cert");
    put("certs/s.key", "key");
    put("certs/ca.pem", "ca");
    put("secret/token", "  s3cret-token \n second line ignored\n");
    setenv("RD_TEST_ADMIN_TOKEN", " adm1n\n", 1); /* a Secret's trailing newline */
    rd_config *cfg = load_ok("server:\n"
                             "  drain_delay_ms: 250\n"
                             "  max_connection_age_ms: 60000\n"
                             "  max_connection_age_grace_ms: 5000\n"
                             "  keepalive_time_ms: 20000\n"
                             "  keepalive_timeout_ms: 5000\n"
                             "  max_concurrent_streams: 20\n"
                             "  memory_limit_bytes: 33554432\n"
                             "  handshake_timeout_ms: 2000\n"
                             "  max_connection_idle_ms: 0\n"
                             "  accept_compressed: true\n"
                             "  max_unsent_answer_bytes: 2097152\n"
                             "  reflection: false\n"
                             "  max_watch_streams: 3\n"
                             "  allow_unauthenticated: true\n"
                             "  tls:\n"
                             "    cert_file: certs/s.crt\n"
                             "    key_file: certs/s.key\n"
                             "    client_ca_file: certs/ca.pem\n"
                             "  auth: {token_file: secret/token}\n"
                             "  admin: {token_env: RD_TEST_ADMIN_TOKEN}\n"
                             "metrics: {listen: \"\", max_tools: 5, max_connections: 9,\n"
                             "  max_connections_per_ip: 3, threads: 4, connection_timeout_ms: 2500,\n"
                             "  auth: {token_file: secret/token}}\n"
                             "log: {level: debug}\n"
                             "reload: {watch: false}\n"
                             "store:\n"
                             "  backend: redis\n"
                             "  redis:\n"
                             "    address: \"unix:/run/redis.sock\"\n"
                             "    db: 3\n"
                             "    key_prefix: \"tenant-a:\"\n"
                             "    sentinels: [\"10.0.0.1:26379\", \"10.0.0.2:26379\"]\n"
                             "    master_name: mymaster\n" MAIN_MIN,
                             NULL);
    assert_int_equal(cfg->server.drain_delay_ms, 250);
    assert_int_equal(cfg->server.max_connection_age_ms, 60000);
    assert_int_equal(cfg->server.max_connection_age_grace_ms, 5000);
    assert_int_equal(cfg->server.keepalive_time_ms, 20000);
    assert_int_equal(cfg->server.keepalive_timeout_ms, 5000);
    assert_int_equal(cfg->server.max_concurrent_streams, 20);
    assert_int_equal(cfg->server.memory_limit_bytes, 33554432);
    assert_int_equal(cfg->server.handshake_timeout_ms, 2000);
    assert_int_equal(cfg->server.max_connection_idle_ms, 0);
    assert_true(cfg->server.accept_compressed);
    assert_int_equal(cfg->server.max_unsent_answer_bytes, 2097152);
    assert_false(cfg->server.reflection);
    assert_int_equal(cfg->server.max_watch_streams, 3);
    assert_true(cfg->server.allow_unauthenticated);
    assert_string_equal(cfg->server.tls.cert_file, in_dir(path, "certs/s.crt"));
    assert_string_equal(cfg->server.tls.client_ca_file, in_dir(path, "certs/ca.pem"));
    assert_string_equal(cfg->server.auth_token, "s3cret-token");
    assert_string_equal(cfg->server.admin_token, "adm1n");
    assert_null(cfg->metrics.listen);
    assert_int_equal(cfg->metrics.max_tools, 5);
    assert_int_equal(cfg->metrics.max_connections, 9);
    assert_int_equal(cfg->metrics.max_connections_per_ip, 3);
    assert_int_equal(cfg->metrics.threads, 4);
    assert_int_equal(cfg->metrics.connection_timeout_ms, 2500);
    assert_string_equal(cfg->metrics.token, "s3cret-token");
    assert_int_equal(cfg->log_level, RD_CONFIG_LOG_DEBUG);
    assert_false(cfg->reload_watch);
    assert_int_equal(cfg->store.backend, RD_STORE_REDIS);
    assert_string_equal(cfg->store.redis.address, "unix:/run/redis.sock");
    assert_int_equal(cfg->store.redis.db, 3);
    assert_int_equal(cfg->store.redis.n_sentinels, 2);
    assert_string_equal(cfg->store.redis.sentinels[1], "10.0.0.2:26379");
    assert_string_equal(cfg->store.redis.master_name, "mymaster");
    rd_config_free(cfg);
    unsetenv("RD_TEST_ADMIN_TOKEN");
}

static void test_listen_addresses_that_are_local(void **state)
{
    (void)state;
    const char *local[] = {"127.0.0.1:50051", "127.3.4.5:1", "localhost:50051", "[::1]:50051",
                           "unix:/run/recoveryd.sock"};
    const char *other[] = {"0.0.0.0:50051", ":50051", "[::]:50051", "10.0.0.5:50051",
                           "recoveryd.svc:50051", "128.0.0.1:1", "127.0.0.1.evil:1"};
    for (size_t i = 0; i < sizeof local / sizeof *local; i++)
        assert_true(rd_config_listen_is_local(local[i]));
    for (size_t i = 0; i < sizeof other / sizeof *other; i++)
        assert_false(rd_config_listen_is_local(other[i]));
}

static void test_ops_key_errors(void **state)
{
    (void)state;
    expect_main_error("server:\n  drain_delay_ms: 600001\n" MAIN_MIN, 2, "server.drain_delay_ms",
                      "out of range (0..600000)");
    expect_main_error("server:\n  max_connection_age_ms: 10\n" MAIN_MIN, 2,
                      "server.max_connection_age_ms", "must be 0 (off) or 1000..86400000");
    expect_main_error("server:\n  max_concurrent_streams: 0\n" MAIN_MIN, 2,
                      "server.max_concurrent_streams", "out of range (1..100000)");
    expect_main_error("server:\n  memory_limit_bytes: 1000\n" MAIN_MIN, 2,
                      "server.memory_limit_bytes", "out of range");
    expect_main_error("server:\n  handshake_timeout_ms: 0\n" MAIN_MIN, 2,
                      "server.handshake_timeout_ms", "out of range (100..600000)");
    expect_main_error("server:\n  max_connection_idle_ms: 5\n" MAIN_MIN, 2,
                      "server.max_connection_idle_ms", "must be 0 (off) or 1000..86400000");
    expect_main_error("server:\n  accept_compressed: maybe\n" MAIN_MIN, 2,
                      "server.accept_compressed", "");
    expect_main_error("server:\n  max_watch_streams: 0\n" MAIN_MIN, 2,
                      "server.max_watch_streams", "out of range (1..100000)");
    expect_main_error("server:\n  max_unsent_answer_bytes: 10\n" MAIN_MIN, 2,
                      "server.max_unsent_answer_bytes", "out of range");
    expect_main_error("server:\n  tls: {cert_file: nope.crt, key_file: nope.key}\n" MAIN_MIN, 2,
                      "server.tls.cert_file", "cannot read");
    put("only.crt", "x");
    expect_main_error("server:\n  tls:\n    cert_file: only.crt\n" MAIN_MIN, 3, "server.tls",
                      "cert_file and key_file go together");
    expect_main_error("server:\n  auth: {token_env: RD_TEST_SURELY_UNSET_VAR}\n" MAIN_MIN, 2,
                      "server.auth.token_env", "RD_TEST_SURELY_UNSET_VAR is not set");
    setenv("RD_TEST_BLANK_TOKEN", " \n", 1);
    expect_main_error("server:\n  auth: {token_env: RD_TEST_BLANK_TOKEN}\n" MAIN_MIN, 2,
                      "server.auth.token_env", "holds no usable secret");
    unsetenv("RD_TEST_BLANK_TOKEN");
    put("empty.token", "\n");
    expect_main_error("server:\n  admin:\n    token_file: empty.token\n" MAIN_MIN, 3,
                      "server.admin.token_file", "no usable secret");
    put("t.token", "abc");
    setenv("RD_TEST_TOKEN_BOTH", "x", 1);
    expect_main_error("server:\n  auth:\n    token_file: t.token\n    token_env: RD_TEST_TOKEN_BOTH\n"
                      MAIN_MIN, 4, "server.auth.token_env", "not both");
    unsetenv("RD_TEST_TOKEN_BOTH");
    expect_main_error("server:\n  auth: {token: abc}\n" MAIN_MIN, 2, "server.auth.token",
                      "unknown key");
    expect_main_error("metrics:\n  listen: nocolon\n" MAIN_MIN, 2, "metrics.listen",
                      "expected host:port");
    expect_main_error("metrics:\n  breaker_refresh_ms: 10\n" MAIN_MIN, 2,
                      "metrics.breaker_refresh_ms", "must be 0 (off) or 1000..600000");
    expect_main_error("metrics:\n  threads: 0\n" MAIN_MIN, 2, "metrics.threads",
                      "out of range (1..16)");
    expect_main_error("metrics:\n  max_connections_per_ip: 0\n" MAIN_MIN, 2,
                      "metrics.max_connections_per_ip", "out of range");
    expect_main_error("metrics:\n  connection_timeout_ms: 10\n" MAIN_MIN, 2,
                      "metrics.connection_timeout_ms", "out of range (1000..600000)");
    expect_main_error("metrics:\n  auth: {token_env: RD_TEST_SURELY_UNSET_VAR}\n" MAIN_MIN, 2,
                      "metrics.auth.token_env", "RD_TEST_SURELY_UNSET_VAR is not set");
    expect_main_error("metrics:\n  max_tools: 0\n" MAIN_MIN, 2, "metrics.max_tools",
                      "out of range (1..100000)");
    expect_main_error("log:\n  level: verbose\n" MAIN_MIN, 2, "log.level", "unknown level");
    expect_main_error("reload:\n  watch: maybe\n" MAIN_MIN, 2, "reload.watch",
                      "expected true or false");
    expect_main_error("store:\n  redis:\n    db: 16\n" MAIN_MIN, 3, "store.redis.db",
                      "out of range (0..15)");
    expect_main_error("store:\n  redis:\n    key_prefix: \"a b\"\n" MAIN_MIN, 3,
                      "store.redis.key_prefix", "is not 1..64 bytes");
    expect_main_error("store:\n  redis:\n    address: \"host\"\n" MAIN_MIN, 3,
                      "store.redis.address", "expected host:port or unix:/path");
    expect_main_error("store:\n  redis:\n    address: \"host:0\"\n" MAIN_MIN, 3,
                      "store.redis.address", "expected host:port or unix:/path");
    expect_main_error("store:\n  redis:\n    address: \"host:65536\"\n" MAIN_MIN, 3,
                      "store.redis.address", "expected host:port or unix:/path");
    expect_main_error("store:\n  redis:\n    address: \"unix:relative\"\n" MAIN_MIN, 3,
                      "store.redis.address", "expected host:port or unix:/path");
    /* the store connects with whatever passes here: a host it has no room for fails now */
    char long_host[512];
    snprintf(long_host, sizeof long_host, "store:\n  redis:\n    address: \"%0256d:6379\"\n%s",
             0, MAIN_MIN);
    expect_main_error(long_host, 3, "store.redis.address", "expected host:port or unix:/path");
    expect_main_error("store:\n  redis:\n    sentinels: [\"unix:/s\"]\n    master_name: m\n"
                      MAIN_MIN, 3, "store.redis.sentinels[0]", "expected host:port");
    expect_main_error("store:\n  redis:\n    sentinels: [\"a:1\"]\n" MAIN_MIN, 3,
                      "store.redis.master_name", "required with sentinels");
    expect_main_error("store:\n  redis:\n    command_timeout_ms: 0\n" MAIN_MIN, 3,
                      "store.redis.command_timeout_ms", "out of range (1..10000)");
    expect_main_error("store:\n  redis:\n    closed_cache_ms: -1\n" MAIN_MIN, 3,
                      "store.redis.closed_cache_ms", "out of range (0..10000)");
    expect_main_error("store:\n  redis:\n    outcome_batch_ms: 5000\n" MAIN_MIN, 3,
                      "store.redis.outcome_batch_ms", "out of range (0..1000)");
    expect_main_error("store:\n  redis:\n    read_cache_ms: 10001\n" MAIN_MIN, 3,
                      "store.redis.read_cache_ms", "out of range (0..10000)");
    expect_main_error("store:\n  redis:\n    cluster: [\"a\"]\n" MAIN_MIN, 3,
                      "store.redis.cluster[0]", "expected host:port");
    expect_main_error("store:\n  redis:\n    cluster: [\"a:1\"]\n    sentinels: [\"b:2\"]\n"
                      "    master_name: m\n" MAIN_MIN, 3,
                      "store.redis.cluster", "not with sentinels");
    expect_main_error("store:\n  redis:\n    db: 2\n    cluster: [\"a:1\"]\n" MAIN_MIN, 3,
                      "store.redis.db", "must be 0 with cluster");
    expect_main_error("store:\n  redis:\n    cluster_refresh_ms: 10\n" MAIN_MIN, 3,
                      "store.redis.cluster_refresh_ms", "out of range (100..600000)");
}

static void test_secret_never_in_error_messages(void **state)
{
    (void)state;
    char err[RD_CONFIG_ERR_MAX] = "";
    put("tok", "topsecretvalue");
    setenv("RD_TEST_TOKEN_SECRET", "othersecret", 1);
    rd_config *cfg = load_files("server:\n  auth:\n    token_file: tok\n"
                                "    token_env: RD_TEST_TOKEN_SECRET\n" MAIN_MIN,
                                RULES_MIN, err);
    assert_null(cfg);
    assert_null(strstr(err, "topsecretvalue"));
    assert_null(strstr(err, "othersecret"));
    unsetenv("RD_TEST_TOKEN_SECRET");
}

static void test_redis_backend_is_accepted(void **state)
{
    (void)state;
    rd_config *cfg = load_ok("store:\n  backend: redis\n" MAIN_MIN, NULL);
    assert_int_equal(cfg->store.backend, RD_STORE_REDIS);
    rd_config_free(cfg);
}

static void test_redis_cluster_seeds_are_read(void **state)
{
    (void)state;
    rd_config *cfg = load_ok("store:\n  backend: redis\n  redis:\n"
                             "    cluster: [\"10.0.0.1:6379\", \"redis-1.redis:6379\"]\n"
                             "    cluster_refresh_ms: 2500\n" MAIN_MIN,
                             NULL);
    assert_int_equal(cfg->store.redis.n_cluster, 2);
    assert_string_equal(cfg->store.redis.cluster[1], "redis-1.redis:6379");
    assert_int_equal(cfg->store.redis.cluster_refresh_ms, 2500);
    rd_config_free(cfg);
    cfg = load_ok("store:\n  backend: redis\n" MAIN_MIN, NULL);
    assert_int_equal(cfg->store.redis.n_cluster, 0);
    assert_int_equal(cfg->store.redis.cluster_refresh_ms, 1000);
    rd_config_free(cfg);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, make_dir, remove_dir)
    const struct CMUnitTest tests[] = {
        T(test_ops_defaults),
        T(test_ops_keys_are_read),
        T(test_ops_key_errors),
        cmocka_unit_test(test_listen_addresses_that_are_local),
        T(test_secret_never_in_error_messages),
        T(test_redis_backend_is_accepted),
        T(test_redis_cluster_seeds_are_read),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
