/* The messages recoveryd packs (every answer and stream message of its
 * services), for the tests of the packer: each is checked with the
 * messages nested in it, found through its field descriptors, and the
 * requests are included because the stubs' tests pack them. */
#ifndef RD_TEST_PB_MESSAGES_H
#define RD_TEST_PB_MESSAGES_H

#include <protobuf-c/protobuf-c.h>

#include "grpc/health/v1/health.pb-c.h"
#include "grpc/reflection/v1alpha/reflection.pb-c.h"
#include "recovery/v1/admin.pb-c.h"
#include "recovery/v1/recovery.pb-c.h"

static const ProtobufCMessageDescriptor *const rd_test_pb_messages[] = {
    &recovery__v1__classify_response__descriptor,
    &recovery__v1__decide_response__descriptor,
    &recovery__v1__record_outcome_response__descriptor,
    &recovery__v1__get_breaker_state_response__descriptor,
    &recovery__v1__get_turn_trace_response__descriptor,
    &recovery__v1__breaker_change__descriptor,
    &recovery__v1__force_breaker_response__descriptor,
    &grpc__health__v1__health_check_response__descriptor,
    &grpc__reflection__v1alpha__server_reflection_response__descriptor,
    &recovery__v1__classify_request__descriptor,
    &recovery__v1__decide_request__descriptor,
    &recovery__v1__record_outcome_request__descriptor,
    &recovery__v1__get_breaker_state_request__descriptor,
    &recovery__v1__get_turn_trace_request__descriptor,
    &recovery__v1__watch_breakers_request__descriptor,
    &recovery__v1__force_breaker_request__descriptor,
};

#define RD_TEST_PB_MESSAGES_COUNT (sizeof rd_test_pb_messages / sizeof rd_test_pb_messages[0])

#endif
