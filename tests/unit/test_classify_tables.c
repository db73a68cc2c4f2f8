/* The data tables of config/rules.yaml (docs/CLASSIFICATION.md, "Rules as
 * data: the tables"): the structured tables by status, code, exception type
 * and kind, the vendor, database and runtime codes, and the tables
 * completed from upstream sources; one real message or code per table,
 * worded as its source words it, and the answer the table gives. A table
 * that stopped matching, or an earlier rule that took its messages, fails
 * here by name. */
#include "classify_shipped.h"
#include "classify_fixture.h"
#include "domain/matcher.h"

#define T RD_TRANSIENT
#define P RD_PERMANENT

/* HTTP statuses, gRPC codes, errno names, provider and JSON-RPC codes,
 * exception types and kinds, given as the structured field. */
static void test_shipped_structured_tables(void **state)
{
    const rd_config *cfg = *state;
    const char *msg = "Invalid airport code: XYZ"; /* never read by structured rules */
    const shipped_case cases[] = {
        {.message = msg, .http_status = 429, .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "http.rate_limited"},
        {.http_status = 503, .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "http.server_error"},
        {.http_status = 408, .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "http.request_timeout"},
        {.http_status = 425, .want_retryability = T, .want_category = RD_CAT_TRANSIENT},
        {.http_status = 401, .want_retryability = P, .want_category = RD_CAT_PERMISSION,
         .want_rule = "http.unauthorized"},
        {.http_status = 403, .want_retryability = P, .want_category = RD_CAT_PERMISSION},
        {.http_status = 404, .want_retryability = P, .want_category = RD_CAT_RESOURCE,
         .want_rule = "http.not_found"},
        {.http_status = 400, .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION},
        {.http_status = 409, .want_retryability = P, .want_category = RD_CAT_LOGIC},
        {.http_status = 413, .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION},
        {.http_status = 422, .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION},
        {.http_status = 501, .want_retryability = P, .want_category = RD_CAT_LOGIC},
        /* 508 Loop Detected: the routing loops until someone fixes it */
        {.http_status = 508, .want_retryability = P, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "http.loop_detected"},
        /* convention: UNAVAILABLE means the channel reached no server */
        {.grpc_code = 14, .message = msg, .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "grpc.unavailable"},
        {.grpc_code = 4, .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "grpc.deadline_exceeded"},
        {.grpc_code = 8, .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE},
        {.grpc_code = 10, .want_retryability = T, .want_category = RD_CAT_TRANSIENT},
        {.grpc_code = 3, .message = "connection reset", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "grpc.invalid_argument"},
        {.grpc_code = 5, .want_retryability = P, .want_category = RD_CAT_RESOURCE},
        {.grpc_code = 7, .want_retryability = P, .want_category = RD_CAT_PERMISSION},
        {.grpc_code = 16, .want_retryability = P, .want_category = RD_CAT_PERMISSION},
        {.grpc_code = 9, .want_retryability = P, .want_category = RD_CAT_LOGIC},
        {.grpc_code = 12, .want_retryability = P, .want_category = RD_CAT_LOGIC},
        {.grpc_code = 11, .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION},
        {.code = "ECONNRESET", .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "errno.econnreset"},
        {.code = "econnrefused", .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "errno.econnrefused"},
        {.code = "ETIMEDOUT", .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "errno.timeout"},
        {.code = "EAI_AGAIN", .want_retryability = T, .want_category = RD_CAT_TRANSIENT},
        {.code = "EPIPE", .want_retryability = T, .want_category = RD_CAT_TRANSIENT},
        {.code = "EHOSTUNREACH", .want_retryability = T, .want_category = RD_CAT_TRANSIENT},
        /* convention: every DNS resolution failure is transient */
        {.code = "ENOTFOUND", .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "errno.dns"},
        {.code = "ENOENT", .want_retryability = P, .want_category = RD_CAT_RESOURCE},
        {.code = "EACCES", .want_retryability = P, .want_category = RD_CAT_PERMISSION},
        {.code = "EPERM", .want_retryability = P, .want_category = RD_CAT_PERMISSION},
        {.code = "ENOSPC", .want_retryability = P, .want_category = RD_CAT_RESOURCE},
        {.code = "ENOMEM", .want_retryability = P, .want_category = RD_CAT_RESOURCE},
        {.code = "EROFS", .want_retryability = P, .want_category = RD_CAT_PERMISSION},
        {.code = "rate_limit_exceeded", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "code.rate_limited"},
        {.code = "overloaded_error", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE},
        {.code = "ThrottlingException", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE},
        /* OpenAI sends insufficient_quota with HTTP 429: the code decides */
        {.code = "insufficient_quota", .http_status = 429, .want_retryability = P,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "code.quota_exhausted"},
        {.code = "context_length_exceeded", .http_status = 400, .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION},
        {.code = "invalid_api_key", .want_retryability = P, .want_category = RD_CAT_PERMISSION},
        {.code = "-32700", .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION},
        {.code = "-32600", .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION},
        {.code = "-32601", .want_retryability = P, .want_category = RD_CAT_LOGIC},
        {.code = "-32602", .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION,
         .want_rule = "jsonrpc.invalid_params"},
        {.code = "-32603", .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE},
        {.code = "-32001", .source = RD_SOURCE_MCP, .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "mcp.request_timeout"},
        {.exception_type = "requests.exceptions.ConnectTimeout", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "exception.timeout"},
        {.exception_type = "openai.AuthenticationError", .want_retryability = P,
         .want_category = RD_CAT_PERMISSION},
        {.exception_type = "FileNotFoundError", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE},
        /* conventions: a made-up tool name is input; cancellation is logic */
        {.kind = RD_KIND_UNKNOWN_TOOL, .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION},
        {.kind = RD_KIND_NOT_PERMITTED, .want_retryability = P,
         .want_category = RD_CAT_PERMISSION},
        {.kind = RD_KIND_INVALID_PARAMETERS, .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION},
        {.kind = RD_KIND_LIMIT_EXCEEDED, .want_retryability = P,
         .want_category = RD_CAT_RESOURCE},
        {.kind = RD_KIND_CANCELED, .want_retryability = P, .want_category = RD_CAT_LOGIC},
        {.kind = RD_KIND_TIMEOUT, .message = msg, .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "kind.timeout"},
        {.kind = RD_KIND_TRANSPORT_ERROR, .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT},
        /* execution_error and internal_error leave the decision to the text */
        {.kind = RD_KIND_EXECUTION_ERROR, .message = msg, .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION},
        {.kind = RD_KIND_INTERNAL_ERROR, .want_retryability = T,
         .want_category = RD_CAT_UNKNOWN, .want_rule = "unknown"},
    };
    check_cases(cfg, cases, LEN(cases));

    /* The kinds set by rules carry the executed meaning. */
    shipped_case k = {.code = "-32602"};
    rd_classification c = classify_shipped(cfg, &k);
    assert_int_equal(c.kind, RD_KIND_INVALID_PARAMETERS);
    assert_false(c.executed);
    k = (shipped_case){.code = "-32001"};
    c = classify_shipped(cfg, &k);
    assert_int_equal(c.kind, RD_KIND_TIMEOUT);
    assert_true(c.executed);
}

/* The data tables of vendor, database and runtime codes (config/rules.yaml,
 * docs/CLASSIFICATION.md "Tables"): each row checked with a real message of
 * that code. */
static void test_shipped_vendor_tables(void **state)
{
    const rd_config *cfg = *state;
    static const shipped_case cases[] = {
        /* Kafka protocol errors (librdkafka names) */
        {.code = "NOT_LEADER_OR_FOLLOWER", .message = "Broker: Not leader for partition",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "db.server_not_ready"},
        {.code = "TOPIC_AUTHORIZATION_FAILED", .message = "Broker: Topic authorization failed",
         .want_retryability = P, .want_category = RD_CAT_PERMISSION,
         .want_rule = "code.invalid_credentials"},
        {.code = "MESSAGE_TOO_LARGE", .message = "Broker: Message size too large",
         .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION,
         .want_rule = "code.invalid_request"},
        {.message = "KafkaError{code=LEADER_NOT_AVAILABLE,val=5,str=\"Broker: Leader not available\"}",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "text.broker_not_ready"},
        /* Elasticsearch error types */
        {.code = "es_rejected_execution_exception", .http_status = 429,
         .message = "rejected execution of coordinating operation", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "code.rate_limited"},
        {.code = "index_not_found_exception", .http_status = 404,
         .message = "no such index [logs-2024.05]", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE, .want_rule = "code.not_found"},
        {.message = "BadRequestError(400, 'parsing_exception', 'unknown query [match_al]')",
         .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION,
         .want_rule = "text.search_request_invalid"},
        /* Google API error reasons */
        {.code = "userRateLimitExceeded", .http_status = 403, .message = "User Rate Limit Exceeded",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "code.rate_limited"},
        {.code = "dailyLimitExceeded", .http_status = 403, .message = "Daily Limit Exceeded",
         .want_retryability = P, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "code.quota_exhausted"},
        {.code = "SERVICE_DISABLED", .http_status = 403,
         .message = "Cloud Vision API has not been used in project 12345 before or it is disabled.",
         .want_retryability = P, .want_category = RD_CAT_PERMISSION,
         .want_rule = "code.invalid_credentials"},
        /* MongoDB server codes, by number and name */
        {.code = "10107", .message = "not primary", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "db.server_not_ready"},
        {.code = "112", .message = "WriteConflict error: this operation conflicted with another "
                                   "operation. Please retry your operation or multi-document "
                                   "transaction.",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT, .want_rule = "db.concurrency"},
        {.code = "121", .message = "Document failed validation", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "db.constraint_violation"},
        /* MySQL error numbers */
        {.code = "1045", .message = "Access denied for user 'app'@'10.0.0.3' (using password: YES)",
         .want_retryability = P, .want_category = RD_CAT_PERMISSION, .want_rule = "db.access_denied"},
        {.code = "1146", .message = "Table 'shop.orders' doesn't exist", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE, .want_rule = "db.missing_object"},
        {.code = "2013", .message = "Lost connection to MySQL server during query",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT, .want_rule = "db.connection_lost"},
        /* SQL Server and Azure SQL error numbers (the transient fault list) */
        {.code = "40613",
         .message = "Database 'orders' on server 'acme' is not currently available. Please retry "
                    "the connection later.",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "db.server_not_ready"},
        {.code = "18456", .message = "Login failed for user 'app'.", .want_retryability = P,
         .want_category = RD_CAT_PERMISSION, .want_rule = "db.access_denied"},
        /* SQLSTATE classes */
        {.code = "22001", .message = "value too long for type character varying(20)",
         .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION,
         .want_rule = "db.bad_statement"},
        {.code = "0A000", .message = "cannot refresh materialized view concurrently",
         .want_retryability = P, .want_category = RD_CAT_LOGIC, .want_rule = "db.session_state"},
        /* Prisma */
        {.code = "P2002", .message = "Unique constraint failed on the fields: (`email`)",
         .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION,
         .want_rule = "db.constraint_violation"},
        /* exception types by language: specific ones decide */
        {.exception_type = "psycopg2.errors.SerializationFailure",
         .message = "could not serialize access due to concurrent update", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "exception.contention"},
        {.exception_type = "jwt.exceptions.ExpiredSignatureError", .message = "Signature has expired",
         .want_retryability = P, .want_category = RD_CAT_PERMISSION, .want_rule = "exception.auth"},
        {.exception_type = "System.NullReferenceException",
         .message = "Object reference not set to an instance of an object.",
         .want_retryability = P, .want_category = RD_CAT_LOGIC, .want_rule = "exception.program_bug"},
        {.exception_type = "sqlalchemy.exc.NoResultFound", .message = "No row was found when one was required",
         .want_retryability = P, .want_category = RD_CAT_RESOURCE, .want_rule = "exception.not_found"},
        {.exception_type = "aiohttp.client_exceptions.ServerDisconnectedError",
         .message = "Server disconnected", .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "exception.connection"},
        {.exception_type = "lxml.etree.XMLSyntaxError",
         .message = "Start tag expected, '<' not found, line 1, column 1", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "exception.malformed_data"},
        /* MySQL's query killed (KILL QUERY): a cancellation */
        {.code = "1317", .message = "ERROR 1317 (70100): Query execution was interrupted",
         .want_retryability = P, .want_category = RD_CAT_LOGIC, .want_rule = "db.query_killed"},
        /* 421, a proxy's 502 for a certificate, Salesforce's record lock */
        {.http_status = 421, .message = "Misdirected Request", .want_retryability = P,
         .want_category = RD_CAT_LOGIC, .want_rule = "http.misdirected"},
        {.http_status = 502,
         .message = "upstream SSL certificate verify error: (20:unable to get local issuer "
                    "certificate) while SSL handshaking to upstream",
         .want_retryability = P, .want_category = RD_CAT_PERMISSION,
         .want_rule = "http.bad_gateway_certificate"},
        {.code = "UNABLE_TO_LOCK_ROW", .message = "unable to obtain exclusive access to this record",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT, .want_rule = "code.object_locked"},
        /* a 503 for a route nobody configured; a 500 from an engine that died */
        {.http_status = 503, .message = "503 NC cluster_not_found", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE, .want_rule = "http.upstream_unconfigured"},
        {.http_status = 500, .message = "Engine loop is not running.", .want_retryability = P,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "http.server_engine_dead"},
        /* Heroku router codes */
        {.message = "at=error code=H10 desc=\"App crashed\" method=GET path=\"/\" status=503",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "text.heroku_router"},
    };
    check_cases(cfg, cases, LEN(cases));
}

/* Exception types of the standard libraries and SDKs, given as the field:
 * the specific ones decide in the structured pass, the base classes only
 * when the text says nothing known. */
static void test_exception_type_tables(void **state)
{
    const rd_config *cfg = *state;
    static const shipped_case cases[] = {
        {.exception_type = "aiohttp.ClientConnectorDNSError", .message = "zork",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "exception.connection_more"},
        {.exception_type = "java.net.NoRouteToHostException", .message = "zork",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "exception.connection_more"},
        {.exception_type = "asyncpg.exceptions.UndefinedTableError", .message = "zork",
         .want_retryability = P, .want_category = RD_CAT_RESOURCE,
         .want_rule = "exception.not_found_more"},
        {.exception_type = "System.UnauthorizedAccessException", .message = "zork",
         .want_retryability = P, .want_category = RD_CAT_PERMISSION,
         .want_rule = "exception.auth_more"},
        {.exception_type = "subprocess.CalledProcessError", .message = "zork",
         .want_retryability = P, .want_category = RD_CAT_LOGIC,
         .want_rule = "generic.command_failed"},
        {.exception_type = "ContextWindowExceededError", .message = "zork",
         .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION,
         .want_rule = "exception.invalid_input_more"},
        /* a base class yields to a text that says what happened ... */
        {.exception_type = "System.Net.Http.HttpRequestException",
         .message = "Response status code does not indicate success: 404 (Not Found).",
         .want_retryability = P, .want_category = RD_CAT_RESOURCE},
        /* ... and decides a text that says nothing known */
        {.exception_type = "System.Net.Http.HttpRequestException", .message = "zork",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "generic.network_failure"},
        {.exception_type = "java.sql.SQLTransientConnectionException",
         .message = "HikariPool-1 - Connection is not available, request timed out after 30000ms.",
         .want_retryability = T, .want_category = RD_CAT_RESOURCE,
         .want_rule = "text.client_pool_busy"},
    };
    check_cases(cfg, cases, sizeof cases / sizeof cases[0]);
}

/* Database, cache and broker codes: SQLSTATE by class, Redis replies,
 * MongoDB code names, AMQP reply codes. */
static void test_database_tables(void **state)
{
    const rd_config *cfg = *state;
    static const shipped_case cases[] = {
        {.code = "08P01", .message = "invalid frontend message type", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "db.sqlstate_connection"},
        {.code = "22P05", .message = "unsupported Unicode escape sequence", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "db.sqlstate_data"},
        {.code = "ER_LOCK_NOWAIT",
         .message = "Statement aborted because lock(s) could not be acquired immediately and "
                    "NOWAIT is set.",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT, .want_rule = "db.mysql_transient"},
        {.code = "1175",
         .message = "You are using safe update mode and you tried to update a table without a "
                    "WHERE that uses a KEY column.",
         .want_retryability = P, .want_category = RD_CAT_LOGIC, .want_rule = "db.mysql_state"},
        {.code = "XX001", .message = "invalid page in block 4 of relation base/16384/16397",
         .want_retryability = P, .want_category = RD_CAT_RESOURCE,
         .want_rule = "db.sqlstate_corrupted"},
        {.message = "ERROR: could not serialize access due to read/write dependencies among "
                    "transactions (SQLSTATE 40001)",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT},
        {.message = "SQLSTATE[08006] [7] could not connect to server", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.sqlstate_transient"},
        {.message = "ERROR: permission denied for table invoices (SQLSTATE 42501)",
         .want_retryability = P, .want_category = RD_CAT_PERMISSION},
        {.message = "MOVED 3999 127.0.0.1:6381", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.redis_retry"},
        {.message = "redis: nil", .want_retryability = P, .want_category = RD_CAT_RESOURCE,
         .want_rule = "text.redis_missing_key"},
        {.code = "InterruptedDueToReplStateChange", .message = "operation was interrupted",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "db.mongo_server_side"},
        {.message = "MongoServerError: Transaction 7 has been aborted.", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.transaction_aborted"},
        {.message = "pika.exceptions.ChannelClosedByBroker: (405, \"RESOURCE_LOCKED - cannot "
                    "obtain exclusive access to locked queue 'jobs'\")",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "text.store_contention"},
    };
    check_cases(cfg, cases, sizeof cases / sizeof cases[0]);
}

/* Providers and platforms: LLM refusals and limits, chat, code-host and
 * payment codes, cloud codes, proxies. */
static void test_provider_tables(void **state)
{
    const rd_config *cfg = *state;
    static const shipped_case cases[] = {
        {.message = "Response was blocked due to PROHIBITED_CONTENT", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "text.llm_content_blocked"},
        {.message = "The model `mixtral-8x7b-32768` has been decommissioned and is no longer "
                    "supported.",
         .want_retryability = P, .want_category = RD_CAT_RESOURCE,
         .want_rule = "text.model_unknown"},
        {.message = "DiscordAPIError[10008]: Unknown Message", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE, .want_rule = "text.chat_api_missing"},
        {.message = "An API error occurred: edit_window_closed", .want_retryability = P,
         .want_category = RD_CAT_LOGIC, .want_rule = "text.chat_api_state"},
        {.http_status = 422, .message = "Validation Failed: No commits between main and topic",
         .want_retryability = P, .want_category = RD_CAT_LOGIC,
         .want_rule = "http.client_error_state"},
        {.code = "DependencyViolation", .http_status = 400,
         .message = "resource sg-0a1 has a dependent object", .want_retryability = P,
         .want_category = RD_CAT_LOGIC, .want_rule = "code.aws_state"},
        {.message = "An error occurred (TransactionConflictException) when calling the PutItem "
                    "operation: Transaction is ongoing for the item",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "text.aws_contention"},
        {.code = "ZonalAllocationFailed",
         .message = "Allocation failed. We do not have sufficient capacity for the requested VM "
                    "size in this zone.",
         .want_retryability = T, .want_category = RD_CAT_RESOURCE,
         .want_rule = "code.cloud_capacity"},
        {.message = "Error 503 Backend fetch failed\n\nGuru Meditation:\nXID: 32770",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "text.proxy_backend_failed"},
        {.http_status = 500,
         .message = "model requires more system memory (9.1 GiB) than is available (6.2 GiB)",
         .want_retryability = P, .want_category = RD_CAT_RESOURCE,
         .want_rule = "http.server_error_memory"},
    };
    check_cases(cfg, cases, sizeof cases / sizeof cases[0]);
}

/* Runtimes, shells and command-line tools in their own words. */
static void test_runtime_and_cli_tables(void **state)
{
    const rd_config *cfg = *state;
    static const shipped_case cases[] = {
        {.message = "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE could not resolve",
         .want_retryability = P, .want_category = RD_CAT_LOGIC,
         .want_rule = "text.cli_script_failed"},
        {.message = "bash: -c: line 1: unexpected EOF while looking for matching `''",
         .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION,
         .want_rule = "text.cli_bad_arguments"},
        {.message = "E: Package 'libssl1.0-dev' has no installation candidate",
         .want_retryability = P, .want_category = RD_CAT_RESOURCE,
         .want_rule = "text.cli_missing_package"},
        {.message = "fatal: Could not read from remote repository.", .want_retryability = P,
         .want_category = RD_CAT_PERMISSION, .want_rule = "text.cli_login_required"},
        {.message = "sqlite3.OperationalError: disk I/O error", .want_retryability = T,
         .want_category = RD_CAT_RESOURCE, .want_rule = "text.errno_device_busy"},
        {.message = "EOFError: EOF when reading a line", .want_retryability = P,
         .want_category = RD_CAT_LOGIC, .want_rule = "text.runtime_misuse"},
        {.message = "Bus error", .want_retryability = P, .want_category = RD_CAT_LOGIC,
         .want_rule = "text.crashed"},
        /* a protocol named "...bus" is no crash */
        {.message = "Modbus Error: [Connection] Failed to connect[ModbusTcpClient(10.0.0.5:502)]",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT},
        {.message = "ssl.SSLError: [SSL: TLSV1_ALERT_UNKNOWN_CA] tlsv1 alert unknown ca",
         .want_retryability = P, .want_category = RD_CAT_PERMISSION,
         .want_rule = "text.tls_client_certificate_refused"},
        {.code = "EXDEV", .message = "cross-device link not permitted, rename", .want_retryability = P,
         .want_category = RD_CAT_LOGIC, .want_rule = "errno.program_misuse"},
    };
    check_cases(cfg, cases, sizeof cases / sizeof cases[0]);
}

/* The weakest words decide only a text no group above reads, and never
 * take one from the groups before them. */
static void test_weakest_words(void **state)
{
    const rd_config *cfg = *state;
    static const shipped_case cases[] = {
        {.message = "the widget file is gone", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE, .want_rule = "text.weak_absent"},
        {.message = "the widget string holds a tab", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "text.weak_request_shape"},
        {.message = "sorry, widgets are queued", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "text.weak_server_side"},
        /* an older weak word still wins over a weakest one */
        {.message = "the widget string must be short", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "text.weak_input"},
        {.message = "connection to widget 7: no file", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.weak_retry"},
    };
    check_cases(cfg, cases, sizeof cases / sizeof cases[0]);
}

/* A rule that reads only the message and comes first decides every text
 * its pattern is found in; so does a pattern's own rule. */
static bool message_only(const rd_match *m)
{
    return !rd_match_is_structured(m) && m->n_sources == 0 && m->n_tools == 0;
}

/* q is found wherever p is: q lies inside p and asks for no word boundary. */
static bool covers(const rd_pattern *q, const rd_pattern *p)
{
    if (q->boundary_start || q->boundary_end || q->len == 0 || q->len > p->len)
        return false;
    for (size_t at = 0; at + q->len <= p->len; at++)
        if (memcmp(p->text + at, q->text, q->len) == 0)
            return true;
    return false;
}

/* Rules marked category_from_words keep their retryability and take the
 * category the words name clearly; with nothing telling in the text the
 * rule's own category stands. */
static void test_marked_rules_take_the_words_category(void **state)
{
    const rd_config *cfg = *state;
    const shipped_case cases[] = {
        {.http_status = 400, .message = "Bad Request", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "http.bad_request"},
        {.http_status = 400, .message = "Room alias already taken", .want_retryability = P,
         .want_category = RD_CAT_LOGIC, .want_rule = "http.bad_request"},
        {.http_status = 422, .message = "No commit found for SHA: 37f31dd", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE, .want_rule = "http.bad_request"},
        {.http_status = 504, .message = "Gateway Timeout", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "http.gateway_timeout"},
        {.http_status = 504,
         .message = "Deadline expired before operation could complete., Status: DEADLINE_EXCEEDED",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "http.gateway_timeout"},
    };
    check_cases(cfg, cases, LEN(cases));
}

/* Every pattern can decide some text: none is found only where a pattern
 * of its own rule is found too, nor, in a rule of the message pass, where
 * a pattern of an earlier rule that reads nothing but the message is (a
 * rule of the structured pass is read before those). Such a pattern costs
 * every scan its automaton states and never changes an answer. */
static void test_no_pattern_is_shadowed(void **state)
{
    const rd_config *cfg = *state;
    const rd_ruleset *rs = &cfg->rules;
    size_t shadowed = 0;
    for (size_t i = 0; i < rs->n_rules; i++) {
        const rd_match *w = &rs->rules[i].when;
        bool message_pass = !rd_match_is_structured(w) && !rd_rule_is_generic(&rs->rules[i]);
        for (size_t k = 0; k < w->n_patterns; k++) {
            const rd_pattern *p = &w->patterns[k];
            for (size_t j = 0; j <= i; j++) {
                const rd_match *v = &rs->rules[j].when;
                if (j < i && (!message_pass || !message_only(v)))
                    continue;
                bool found = false;
                for (size_t l = 0; l < v->n_patterns && !found; l++) {
                    if (j == i && l == k)
                        continue;
                    /* of two same patterns in one rule, the later is the spare */
                    const rd_pattern *q = &v->patterns[l];
                    if (j == i && l > k && q->len == p->len &&
                        q->boundary_start == p->boundary_start &&
                        q->boundary_end == p->boundary_end)
                        continue;
                    if (covers(q, p)) {
                        fprintf(stderr, "rule %s: pattern \"%s\" never decides: %s has \"%s\"\n",
                                rs->rules[i].id, p->text, j == i ? "its own rule" : rs->rules[j].id,
                                q->text);
                        found = true;
                    }
                }
                if (found) {
                    shadowed++;
                    break;
                }
            }
        }
    }
    assert_int_equal(shadowed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_structured_tables),
        cmocka_unit_test(test_shipped_vendor_tables),
        cmocka_unit_test(test_exception_type_tables),
        cmocka_unit_test(test_database_tables),
        cmocka_unit_test(test_provider_tables),
        cmocka_unit_test(test_runtime_and_cli_tables),
        cmocka_unit_test(test_weakest_words),
        cmocka_unit_test(test_marked_rules_take_the_words_category),
        cmocka_unit_test(test_no_pattern_is_shadowed),
    };
    return cmocka_run_group_tests_name("shipped data tables", tests, load_shipped, free_shipped);
}
