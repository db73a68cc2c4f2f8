import type { Retryability as _recovery_v1_Retryability, Retryability__Output as _recovery_v1_Retryability__Output } from '../../recovery/v1/Retryability';
import type { Category as _recovery_v1_Category, Category__Output as _recovery_v1_Category__Output } from '../../recovery/v1/Category';
import type { ErrorKind as _recovery_v1_ErrorKind, ErrorKind__Output as _recovery_v1_ErrorKind__Output } from '../../recovery/v1/ErrorKind';
import type { ClassificationTier as _recovery_v1_ClassificationTier, ClassificationTier__Output as _recovery_v1_ClassificationTier__Output } from '../../recovery/v1/ClassificationTier';
import type { ToolEffects as _recovery_v1_ToolEffects, ToolEffects__Output as _recovery_v1_ToolEffects__Output } from '../../recovery/v1/ToolEffects';
import type { EffectSafety as _recovery_v1_EffectSafety, EffectSafety__Output as _recovery_v1_EffectSafety__Output } from '../../recovery/v1/EffectSafety';
import type { Long } from '@grpc/proto-loader';
export interface Classification {
    'retryability'?: (_recovery_v1_Retryability);
    'category'?: (_recovery_v1_Category);
    'kind'?: (_recovery_v1_ErrorKind);
    'executed'?: (boolean);
    'retry_after_ms'?: (number | string | Long);
    'suggestion'?: (string);
    'rule_id'?: (string);
    'overridden'?: (boolean);
    'llm_message'?: (string);
    'decided_by'?: (_recovery_v1_ClassificationTier);
    'effects'?: (_recovery_v1_ToolEffects);
    'effect_safety'?: (_recovery_v1_EffectSafety);
    'effect_reason'?: (string);
}
export interface Classification__Output {
    'retryability': (_recovery_v1_Retryability__Output);
    'category': (_recovery_v1_Category__Output);
    'kind': (_recovery_v1_ErrorKind__Output);
    'executed': (boolean);
    'retry_after_ms': (number);
    'suggestion': (string);
    'rule_id': (string);
    'overridden': (boolean);
    'llm_message': (string);
    'decided_by': (_recovery_v1_ClassificationTier__Output);
    'effects': (_recovery_v1_ToolEffects__Output);
    'effect_safety': (_recovery_v1_EffectSafety__Output);
    'effect_reason': (string);
}
