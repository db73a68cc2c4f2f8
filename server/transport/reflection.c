/* grpc.reflection v1alpha and v1: list_services, file_by_filename and
 * file_containing_symbol, answered from the serialized FileDescriptorSet of
 * our protos (rd_descriptor_set, built with the server).
 *
 * The set is small, so every request walks its wire format directly rather
 * than building an index: FileDescriptorSet.file (1) holds each
 * FileDescriptorProto, which has name (1), package (2), dependency (3),
 * message_type (4; DescriptorProto: name 1, nested_type 3, enum_type 4),
 * enum_type (5; name 1) and service (6; name 1, method 2 with name 1).
 * The set holds every service the server answers (ours, grpc.health.v1,
 * both reflection versions) with source info, so clients list them all and
 * `describe` shows the proto comments. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "grpc/reflection/v1alpha/reflection.pb-c.h"
#include "transport/codec.h"
#include "transport/services.h"

extern const unsigned char rd_descriptor_set[];
extern const unsigned long rd_descriptor_set_len;

#define MAX_FILES 16
#define MAX_SERVICES 16

typedef Grpc__Reflection__V1alpha__ServerReflectionRequest refl_request;
typedef Grpc__Reflection__V1alpha__ServerReflectionResponse refl_response;

/* ---- a minimal protobuf wire reader ---- */

typedef struct pb_span {
    const uint8_t *p;
    size_t len;
} pb_span;

typedef struct pb_field {
    uint32_t number;
    uint32_t wire;
    pb_span bytes;               /* wire type 2 */
} pb_field;

static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* Advances *cur past the next field of span; false at the end or on
 * malformed input. */
static bool next_field(pb_span *cur, pb_field *f)
{
    const uint8_t *p = cur->p, *end = cur->p + cur->len;
    uint64_t key, v;
    if (p >= end || !read_varint(&p, end, &key))
        return false;
    f->number = (uint32_t)(key >> 3);
    f->wire = (uint32_t)(key & 7);
    f->bytes = (pb_span){0};
    switch (f->wire) {
    case 0:
        if (!read_varint(&p, end, &v))
            return false;
        break;
    case 1:
        if (end - p < 8)
            return false;
        p += 8;
        break;
    case 2:
        if (!read_varint(&p, end, &v) || v > (uint64_t)(end - p))
            return false;
        f->bytes = (pb_span){p, (size_t)v};
        p += v;
        break;
    case 5:
        if (end - p < 4)
            return false;
        p += 4;
        break;
    default:
        return false; /* groups are not used by proto3 */
    }
    cur->len -= (size_t)(p - cur->p);
    cur->p = p;
    return true;
}

static bool span_eq(pb_span s, const char *text, size_t n)
{
    return s.len == n && memcmp(s.p, text, n) == 0;
}

/* The first length-delimited field `number` of msg (empty when absent). */
static pb_span string_field(pb_span msg, uint32_t number)
{
    pb_field f;
    while (next_field(&msg, &f))
        if (f.number == number && f.wire == 2)
            return f.bytes;
    return (pb_span){0};
}

/* ---- symbols ---- */

/* Does `name` (relative to the scope of msg) name msg, or a type, enum or
 * field nested in it? */
static bool message_has(pb_span msg, const char *name, size_t n)
{
    pb_span own = string_field(msg, 1);
    if (span_eq(own, name, n))
        return true;
    if (n <= own.len + 1 || memcmp(name, own.p, own.len) != 0 || name[own.len] != '.')
        return false;
    const char *rest = name + own.len + 1;
    size_t rest_n = n - own.len - 1;
    pb_field f;
    while (next_field(&msg, &f)) {
        if (f.wire != 2)
            continue;
        if (f.number == 3 && message_has(f.bytes, rest, rest_n))
            return true;
        if ((f.number == 2 || f.number == 4) && span_eq(string_field(f.bytes, 1), rest, rest_n))
            return true; /* a field or a nested enum */
    }
    return false;
}

static bool service_has(pb_span svc, const char *name, size_t n)
{
    pb_span own = string_field(svc, 1);
    if (span_eq(own, name, n))
        return true;
    if (n <= own.len + 1 || memcmp(name, own.p, own.len) != 0 || name[own.len] != '.')
        return false;
    pb_field f;
    while (next_field(&svc, &f))
        if (f.number == 2 && f.wire == 2 &&
            span_eq(string_field(f.bytes, 1), name + own.len + 1, n - own.len - 1))
            return true;
    return false;
}

static bool file_declares(pb_span file, const char *symbol)
{
    pb_span pkg = string_field(file, 2);
    size_t n = strlen(symbol);
    if (pkg.len) {
        if (n <= pkg.len + 1 || memcmp(symbol, pkg.p, pkg.len) != 0 || symbol[pkg.len] != '.')
            return false;
        symbol += pkg.len + 1;
        n -= pkg.len + 1;
    }
    pb_field f;
    while (next_field(&file, &f)) {
        if (f.wire != 2)
            continue;
        if ((f.number == 4 && message_has(f.bytes, symbol, n)) ||
            (f.number == 5 && span_eq(string_field(f.bytes, 1), symbol, n)) ||
            (f.number == 6 && service_has(f.bytes, symbol, n)))
            return true;
    }
    return false;
}

/* ---- files of the set ---- */

typedef struct file_list {
    pb_span files[MAX_FILES];
    size_t n;
} file_list;

static void all_files(file_list *out)
{
    pb_span set = {rd_descriptor_set, rd_descriptor_set_len};
    pb_field f;
    out->n = 0;
    while (out->n < MAX_FILES && next_field(&set, &f))
        if (f.number == 1 && f.wire == 2)
            out->files[out->n++] = f.bytes;
}

static bool file_named(const file_list *all, pb_span name, size_t *index)
{
    for (size_t i = 0; i < all->n; i++) {
        if (span_eq(string_field(all->files[i], 1), (const char *)name.p, name.len)) {
            *index = i;
            return true;
        }
    }
    return false;
}

/* Adds file i and, depth first, every file it imports (once each). */
static void add_with_deps(const file_list *all, size_t i, bool *chosen, size_t *order,
                          size_t *n)
{
    if (chosen[i])
        return;
    chosen[i] = true;
    order[(*n)++] = i;
    pb_span file = all->files[i];
    pb_field f;
    size_t dep;
    while (next_field(&file, &f))
        if (f.number == 3 && f.wire == 2 && file_named(all, f.bytes, &dep))
            add_with_deps(all, dep, chosen, order, n);
}

/* ---- responses ---- */

static refl_response *new_response(rd_arena *a, refl_request *req)
{
    refl_response *r = rd_arena_alloc(a, sizeof *r);
    if (!r)
        return NULL;
    grpc__reflection__v1alpha__server_reflection_response__init(r);
    r->valid_host = req->host;
    r->original_request = req;
    return r;
}

static refl_response *error_response(rd_arena *a, refl_request *req, int code, const char *msg)
{
    refl_response *r = new_response(a, req);
    Grpc__Reflection__V1alpha__ErrorResponse *e = rd_arena_alloc(a, sizeof *e);
    if (!r || !e)
        return NULL;
    grpc__reflection__v1alpha__error_response__init(e);
    e->error_code = code;
    e->error_message = rd_arena_strdup(a, msg);
    r->message_response_case =
        GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_ERROR_RESPONSE;
    r->error_response = e;
    return e->error_message ? r : NULL;
}

static refl_response *files_response(rd_arena *a, refl_request *req, const file_list *all,
                                     size_t first)
{
    bool chosen[MAX_FILES] = {false};
    size_t order[MAX_FILES], n = 0;
    add_with_deps(all, first, chosen, order, &n);
    refl_response *r = new_response(a, req);
    Grpc__Reflection__V1alpha__FileDescriptorResponse *fd = rd_arena_alloc(a, sizeof *fd);
    ProtobufCBinaryData *blobs = rd_arena_alloc(a, n * sizeof *blobs);
    if (!r || !fd || !blobs)
        return NULL;
    grpc__reflection__v1alpha__file_descriptor_response__init(fd);
    for (size_t i = 0; i < n; i++)
        blobs[i] = (ProtobufCBinaryData){.len = all->files[order[i]].len,
                                         .data = (uint8_t *)all->files[order[i]].p};
    fd->n_file_descriptor_proto = n;
    fd->file_descriptor_proto = blobs;
    r->message_response_case =
        GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_FILE_DESCRIPTOR_RESPONSE;
    r->file_descriptor_response = fd;
    return r;
}

/* "package.Service" of every service in the set. */
static refl_response *list_response(rd_arena *a, refl_request *req, const file_list *all)
{
    Grpc__Reflection__V1alpha__ServiceResponse **items =
        rd_arena_alloc(a, MAX_SERVICES * sizeof *items);
    refl_response *r = new_response(a, req);
    Grpc__Reflection__V1alpha__ListServiceResponse *list = rd_arena_alloc(a, sizeof *list);
    if (!items || !r || !list)
        return NULL;
    grpc__reflection__v1alpha__list_service_response__init(list);
    for (size_t i = 0; i < all->n; i++) {
        pb_span file = all->files[i], pkg = string_field(file, 2);
        pb_field f;
        while (list->n_service < MAX_SERVICES && next_field(&file, &f)) {
            if (f.number != 6 || f.wire != 2)
                continue;
            pb_span name = string_field(f.bytes, 1);
            Grpc__Reflection__V1alpha__ServiceResponse *s = rd_arena_alloc(a, sizeof *s);
            if (!s)
                return NULL;
            grpc__reflection__v1alpha__service_response__init(s);
            s->name = rd_arena_printf(a, "%.*s%s%.*s", (int)pkg.len, (const char *)pkg.p,
                                      pkg.len ? "." : "", (int)name.len, (const char *)name.p);
            items[list->n_service++] = s;
        }
    }
    list->service = items;
    r->message_response_case =
        GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_LIST_SERVICES_RESPONSE;
    r->list_services_response = list;
    return r;
}

static refl_response *answer(rd_arena *a, refl_request *req)
{
    file_list all;
    all_files(&all);
    size_t i;
    switch (req->message_request_case) {
    case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_LIST_SERVICES:
        return list_response(a, req, &all);
    case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_BY_FILENAME: {
        pb_span name = {(const uint8_t *)req->file_by_filename, strlen(req->file_by_filename)};
        if (file_named(&all, name, &i))
            return files_response(a, req, &all, i);
        return error_response(a, req, 5 /* NOT_FOUND */, "file not found");
    }
    case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_SYMBOL:
        for (i = 0; i < all.n; i++)
            if (file_declares(all.files[i], req->file_containing_symbol))
                return files_response(a, req, &all, i);
        return error_response(a, req, 5 /* NOT_FOUND */, "symbol not found");
    case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_EXTENSION:
        return error_response(a, req, 5 /* NOT_FOUND */, "no extensions are defined");
    default:
        return error_response(a, req, 12 /* UNIMPLEMENTED */, "request not supported");
    }
}

#define REFL_TEXT_MAX 4096 /* a host, file or symbol name */

/* The string the request asks about, and its field's name in *field;
 * NULL when its kind carries none. */
static const char *asked_text(const refl_request *req, const char **field)
{
    switch (req->message_request_case) {
    case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_BY_FILENAME:
        *field = "file_by_filename";
        return req->file_by_filename;
    case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_SYMBOL:
        *field = "file_containing_symbol";
        return req->file_containing_symbol;
    case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_EXTENSION:
        *field = "file_containing_extension.containing_type";
        return req->file_containing_extension ? req->file_containing_extension->containing_type
                                              : NULL;
    case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_ALL_EXTENSION_NUMBERS_OF_TYPE:
        *field = "all_extension_numbers_of_type";
        return req->all_extension_numbers_of_type;
    case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_LIST_SERVICES:
        *field = "list_services";
        return req->list_services;
    default:
        return NULL;
    }
}

/* The request's strings, which every answer echoes (original_request),
 * must be valid UTF-8 like any proto3 string. */
static int check_request(const refl_request *req, rd_status *st)
{
    const char *field = NULL, *text = asked_text(req, &field);
    int rc = rd_codec_text_in(req->host, "host", REFL_TEXT_MAX, false, st);
    if (rc == RD_OK && text)
        rc = rd_codec_text_in(text, field, REFL_TEXT_MAX, false, st);
    return rc;
}

int rd_reflection_handler(const rd_rpc *rpc, const ProtobufCMessage *req,
                          rd_reply *reply, rd_status *st)
{
    int rc = check_request((const refl_request *)req, st);
    if (rc != RD_OK)
        return rc;
    refl_response *r = answer(rpc->ctx.arena, (refl_request *)req);
    if (!r)
        return rd_status_set(st, RD_ERR_NOMEM, "reflection: out of memory");
    reply->msg = (ProtobufCMessage *)r;
    return RD_OK;
}
