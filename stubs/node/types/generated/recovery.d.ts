import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';
import type { BreakerChange as _recovery_v1_BreakerChange, BreakerChange__Output as _recovery_v1_BreakerChange__Output } from './recovery/v1/BreakerChange';
import type { BreakerState as _recovery_v1_BreakerState, BreakerState__Output as _recovery_v1_BreakerState__Output } from './recovery/v1/BreakerState';
import type { CascadeStep as _recovery_v1_CascadeStep, CascadeStep__Output as _recovery_v1_CascadeStep__Output } from './recovery/v1/CascadeStep';
import type { Classification as _recovery_v1_Classification, Classification__Output as _recovery_v1_Classification__Output } from './recovery/v1/Classification';
import type { ClassifyRequest as _recovery_v1_ClassifyRequest, ClassifyRequest__Output as _recovery_v1_ClassifyRequest__Output } from './recovery/v1/ClassifyRequest';
import type { ClassifyResponse as _recovery_v1_ClassifyResponse, ClassifyResponse__Output as _recovery_v1_ClassifyResponse__Output } from './recovery/v1/ClassifyResponse';
import type { DecideRequest as _recovery_v1_DecideRequest, DecideRequest__Output as _recovery_v1_DecideRequest__Output } from './recovery/v1/DecideRequest';
import type { DecideResponse as _recovery_v1_DecideResponse, DecideResponse__Output as _recovery_v1_DecideResponse__Output } from './recovery/v1/DecideResponse';
import type { GetBreakerStateRequest as _recovery_v1_GetBreakerStateRequest, GetBreakerStateRequest__Output as _recovery_v1_GetBreakerStateRequest__Output } from './recovery/v1/GetBreakerStateRequest';
import type { GetBreakerStateResponse as _recovery_v1_GetBreakerStateResponse, GetBreakerStateResponse__Output as _recovery_v1_GetBreakerStateResponse__Output } from './recovery/v1/GetBreakerStateResponse';
import type { GetTurnTraceRequest as _recovery_v1_GetTurnTraceRequest, GetTurnTraceRequest__Output as _recovery_v1_GetTurnTraceRequest__Output } from './recovery/v1/GetTurnTraceRequest';
import type { GetTurnTraceResponse as _recovery_v1_GetTurnTraceResponse, GetTurnTraceResponse__Output as _recovery_v1_GetTurnTraceResponse__Output } from './recovery/v1/GetTurnTraceResponse';
import type { PlanStep as _recovery_v1_PlanStep, PlanStep__Output as _recovery_v1_PlanStep__Output } from './recovery/v1/PlanStep';
import type { RecordOutcomeRequest as _recovery_v1_RecordOutcomeRequest, RecordOutcomeRequest__Output as _recovery_v1_RecordOutcomeRequest__Output } from './recovery/v1/RecordOutcomeRequest';
import type { RecordOutcomeResponse as _recovery_v1_RecordOutcomeResponse, RecordOutcomeResponse__Output as _recovery_v1_RecordOutcomeResponse__Output } from './recovery/v1/RecordOutcomeResponse';
import type { RecoveryServiceClient as _recovery_v1_RecoveryServiceClient, RecoveryServiceDefinition as _recovery_v1_RecoveryServiceDefinition } from './recovery/v1/RecoveryService';
import type { ScopeLabel as _recovery_v1_ScopeLabel, ScopeLabel__Output as _recovery_v1_ScopeLabel__Output } from './recovery/v1/ScopeLabel';
import type { ToolError as _recovery_v1_ToolError, ToolError__Output as _recovery_v1_ToolError__Output } from './recovery/v1/ToolError';
import type { TraceEvent as _recovery_v1_TraceEvent, TraceEvent__Output as _recovery_v1_TraceEvent__Output } from './recovery/v1/TraceEvent';
import type { TurnSummary as _recovery_v1_TurnSummary, TurnSummary__Output as _recovery_v1_TurnSummary__Output } from './recovery/v1/TurnSummary';
import type { WatchBreakersRequest as _recovery_v1_WatchBreakersRequest, WatchBreakersRequest__Output as _recovery_v1_WatchBreakersRequest__Output } from './recovery/v1/WatchBreakersRequest';
type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
    new (...args: ConstructorParameters<Constructor>): Subtype;
};
export interface ProtoGrpcType {
    recovery: {
        v1: {
            Action: EnumTypeDefinition;
            BreakerChange: MessageTypeDefinition<_recovery_v1_BreakerChange, _recovery_v1_BreakerChange__Output>;
            BreakerState: MessageTypeDefinition<_recovery_v1_BreakerState, _recovery_v1_BreakerState__Output>;
            BreakerStatus: EnumTypeDefinition;
            CascadeAction: EnumTypeDefinition;
            CascadeStep: MessageTypeDefinition<_recovery_v1_CascadeStep, _recovery_v1_CascadeStep__Output>;
            Category: EnumTypeDefinition;
            Classification: MessageTypeDefinition<_recovery_v1_Classification, _recovery_v1_Classification__Output>;
            ClassificationTier: EnumTypeDefinition;
            ClassifyRequest: MessageTypeDefinition<_recovery_v1_ClassifyRequest, _recovery_v1_ClassifyRequest__Output>;
            ClassifyResponse: MessageTypeDefinition<_recovery_v1_ClassifyResponse, _recovery_v1_ClassifyResponse__Output>;
            DecideRequest: MessageTypeDefinition<_recovery_v1_DecideRequest, _recovery_v1_DecideRequest__Output>;
            DecideResponse: MessageTypeDefinition<_recovery_v1_DecideResponse, _recovery_v1_DecideResponse__Output>;
            EffectSafety: EnumTypeDefinition;
            ErrorKind: EnumTypeDefinition;
            ErrorSource: EnumTypeDefinition;
            GetBreakerStateRequest: MessageTypeDefinition<_recovery_v1_GetBreakerStateRequest, _recovery_v1_GetBreakerStateRequest__Output>;
            GetBreakerStateResponse: MessageTypeDefinition<_recovery_v1_GetBreakerStateResponse, _recovery_v1_GetBreakerStateResponse__Output>;
            GetTurnTraceRequest: MessageTypeDefinition<_recovery_v1_GetTurnTraceRequest, _recovery_v1_GetTurnTraceRequest__Output>;
            GetTurnTraceResponse: MessageTypeDefinition<_recovery_v1_GetTurnTraceResponse, _recovery_v1_GetTurnTraceResponse__Output>;
            Hint: EnumTypeDefinition;
            PlanStep: MessageTypeDefinition<_recovery_v1_PlanStep, _recovery_v1_PlanStep__Output>;
            RecordOutcomeRequest: MessageTypeDefinition<_recovery_v1_RecordOutcomeRequest, _recovery_v1_RecordOutcomeRequest__Output>;
            RecordOutcomeResponse: MessageTypeDefinition<_recovery_v1_RecordOutcomeResponse, _recovery_v1_RecordOutcomeResponse__Output>;
            RecoveryService: SubtypeConstructor<typeof grpc.Client, _recovery_v1_RecoveryServiceClient> & {
                service: _recovery_v1_RecoveryServiceDefinition;
            };
            Retryability: EnumTypeDefinition;
            ScopeLabel: MessageTypeDefinition<_recovery_v1_ScopeLabel, _recovery_v1_ScopeLabel__Output>;
            ToolEffects: EnumTypeDefinition;
            ToolError: MessageTypeDefinition<_recovery_v1_ToolError, _recovery_v1_ToolError__Output>;
            TraceEvent: MessageTypeDefinition<_recovery_v1_TraceEvent, _recovery_v1_TraceEvent__Output>;
            TurnSummary: MessageTypeDefinition<_recovery_v1_TurnSummary, _recovery_v1_TurnSummary__Output>;
            WatchBreakersRequest: MessageTypeDefinition<_recovery_v1_WatchBreakersRequest, _recovery_v1_WatchBreakersRequest__Output>;
        };
    };
}
export {};
