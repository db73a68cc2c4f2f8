import type { Classification as _recovery_v1_Classification, Classification__Output as _recovery_v1_Classification__Output } from '../../recovery/v1/Classification';
export interface ClassifyResponse {
    'classification'?: (_recovery_v1_Classification | null);
}
export interface ClassifyResponse__Output {
    'classification': (_recovery_v1_Classification__Output | null);
}
